import type { Arch } from "@netstress/core/arch/arch.ts";
import type { Registry } from "../registry/create-registry.ts";
import { parseImageReference } from "../registry/image-reference.ts";
import type { ExtensionImageStreamTag } from "./extension-image-streams.ts";
import type { Overrides } from "./overrides.ts";
import { planComponents } from "./plan-components.ts";
import { probeComponent } from "./probe-component.ts";
import { readRelease } from "./read-release.ts";
import type { ResolvedPlan } from "./resolved-plan.ts";
import type { TagFilter } from "./tag-filter.ts";
import { DEFAULT_TEST_BINARY_REGISTRY, type TestBinaryRegistry } from "./test-binary-registry.ts";

export interface ResolvePlanOptions {
  /** The payload to plan from: the released payload (with overrides) or the PR payload (with a baseline). */
  payload: string;
  arch: Arch;
  overrides?: Overrides;
  /** The released payload to compare a PR payload with; differing tags become overrides. */
  baselinePayload?: string;
  testBinaries?: TestBinaryRegistry;
  /** EXTENSION_BINARY_OVERRIDE_INCLUDE_TAGS / _EXCLUDE_TAGS: which payload tags are probed. */
  tagFilter?: TagFilter;
  /** Test extensions outside the payload, from ImageStream tags (`--extension-imagestream`). */
  extensions?: readonly ExtensionImageStreamTag[];
  registry: Registry;
  /** Keep the binaries found in the cache, for fetchPlanBinaries; planning alone only checks they exist. */
  keepBinaries?: boolean;
  /** Abandons the plan: every request, retry and layer read stops (the registry's task budget also applies). */
  signal?: AbortSignal;
}

/**
 * Discovers the test-carrying components of a payload and which binary each uses for an arch:
 * reads the payload's image-references, decides PR override versus released (pure), then reads
 * every component image concurrently (the registry bounds the requests in flight) to pin its
 * digest and find its binary. Everything known by digest comes from the cache, so the components
 * a payload shares with the last one planned cost no request.
 */
export async function resolvePlan(options: ResolvePlanOptions): Promise<ResolvedPlan> {
  const { arch } = options;
  // One budget for the whole plan: time and bytes across the payload, the baseline and every component.
  const registry = options.registry.withBudget(options.signal ? { signal: options.signal } : {});
  const [release, baseline] = await Promise.all([
    readRelease({ registry, reference: options.payload, arch }),
    options.baselinePayload ? readRelease({ registry, reference: options.baselinePayload, arch }) : undefined,
  ]);
  const candidates = planComponents({
    release: release.references,
    registry: options.testBinaries ?? DEFAULT_TEST_BINARY_REGISTRY,
    ...(options.overrides ? { overrides: options.overrides } : {}),
    ...(baseline ? { baseline: baseline.references } : {}),
    ...(options.tagFilter ? { filter: options.tagFilter } : {}),
    ...(options.extensions ? { extensions: options.extensions } : {}),
  });
  const payload = parseImageReference(options.payload);
  const probed = await Promise.all(
    candidates.map((candidate) =>
      probeComponent({ registry, candidate, arch, payload, keepBinary: options.keepBinaries ?? false }),
    ),
  );
  const components = probed.filter((c) => c !== undefined);
  return {
    payload: release.identity,
    ...(baseline ? { baseline: baseline.identity } : {}),
    arch,
    components,
  };
}
