import { expandImageTemplate } from "../config/expand-image-template.ts";
import { materializePlan } from "../payload/materialize-plan.ts";
import { preparePrPayload } from "../payload/prepare-pr-payload.ts";
import { PayloadError } from "../payload/payload-error.ts";
import { resolvePlan } from "../payload/resolve-plan.ts";
import { restorePlanBinaries } from "../payload/restore-plan-binaries.ts";
import { ReleaseControllerError, type ReleaseController } from "../payload/release-controller.ts";
import type { ExtensionImageStreamTag } from "../payload/extension-image-streams.ts";
import type { TagFilter } from "../payload/tag-filter.ts";
import type { Registry } from "../registry/create-registry.ts";
import { RegistryError } from "../registry/registry-error.ts";
import type { ExecutionPlan } from "../runner/execution-plan.ts";
import type { PlanResolution, ResolveRunPlan } from "../runs/plan-resolver.ts";
import type { PrRun, RunRecord } from "../runs/run-record.ts";

interface ResolverOptions {
  cacheDir: string;
  registry: Registry;
  releaseController?: ReleaseController;
  /** Which payload tags are probed for test binaries (EXTENSION_BINARY_OVERRIDE_*_TAGS). */
  tagFilter?: TagFilter;
  /** Test extensions outside the payload (ImageStream tags). */
  extensions?: readonly ExtensionImageStreamTag[];
  /** The resolve stage's deadline, honoured by every fetch of the run's plans. */
  signal?: AbortSignal;
  /**
   * PR payloads for PR runs whose clusters under test install them: `wanted` says whether runs get
   * clusters now (the farm's clusterSources); `repository` is where assembled ones are pushed.
   */
  prPayloads?: { wanted: () => boolean; repository?: string };
}

/** The discovery options every resolvePlan call of a run takes alike (PR and baseline arms). */
const discovery = (options: ResolverOptions) => ({
  ...(options.tagFilter ? { tagFilter: options.tagFilter } : {}),
  ...(options.extensions ? { extensions: options.extensions } : {}),
  ...(options.signal ? { signal: options.signal } : {}),
});

/**
 * Resolves runs from release payloads (src/payload), for every subject:
 * - a PR run: the PR's images for the repository's tags (from the pr_image template) override the
 *   payload's; with baseline=payload the released binaries run beside them. A PR image that does
 *   not exist yet means "wait", not "fail". A release_stream is tested at its latest payload, as
 *   the release-controller names it.
 * - a gate run: the candidate payload is the "pr" arm (components whose binaries differ from the
 *   baseline's are its overrides), the baseline payload the "baseline" arm unless it is the same;
 * - a periodic run: the stream's payload alone, as the "pr" arm (compared with the stream's history);
 * - a run that already has its plan (`more`): that plan, its binaries fetched again where swept.
 */
export function createPayloadPlanResolver(options: ResolverOptions): ResolveRunPlan {
  return async ({ run, signal }) => {
    if (run.plan) return restoredPlan(options.registry.withBudget({ signal }), run, run.plan);
    const subject = run.subject;
    switch (subject.kind) {
      case "gate":
        return resolvePayloadPlan({ ...options, signal }, run, subject);
      case "periodic":
        return resolvePayloadPlan({ ...options, signal }, run, {
          ...subject,
          baselinePayload: subject.payload,
        });
      case "pr":
        return resolvePrPlan({ ...options, signal }, run as PrRun);
    }
  };
}

async function resolvePayloadPlan(
  options: ResolverOptions,
  run: RunRecord,
  { payload, baselinePayload }: { payload: string; baselinePayload: string },
): Promise<PlanResolution> {
  const registry = options.registry;
  const sameBaseline = baselinePayload === payload;
  const [plan, baselinePlan] = await Promise.all([
    resolvePlan({
      payload,
      arch: run.arch,
      registry,
      ...discovery(options),
      ...(sameBaseline ? {} : { baselinePayload }),
    }),
    sameBaseline
      ? undefined
      : resolvePlan({ payload: baselinePayload, arch: run.arch, registry, ...discovery(options) }),
  ]);
  const executionPlan = await materializePlan({
    plan,
    cacheDir: options.cacheDir,
    registry,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(baselinePlan ? { baselinePlan } : {}),
  });
  return { kind: "ready", plan: executionPlan };
}

async function resolvePrPlan(options: ResolverOptions, run: PrRun): Promise<PlanResolution> {
  const { source } = run;
  let payload = source.payload;
  if (!payload && source.releaseStream && options.releaseController) {
    try {
      payload = (await options.releaseController.latest(source.releaseStream)).pullSpec;
    } catch (error) {
      if (!(error instanceof ReleaseControllerError)) throw error;
      const unknown = error.code === "unknown-stream";
      return {
        kind: "unavailable",
        conclusion: unknown ? "action_required" : "failure",
        reason: error.message,
      };
    }
  }
  if (!payload) {
    return {
      kind: "unavailable",
      conclusion: "action_required",
      reason: source.releaseStream
        ? `release_stream ${source.releaseStream} cannot be resolved: this bot has no release-controller configured; set payload to a pullspec`
        : "no payload to test against: set payload in .github/network-stress.yml",
    };
  }
  if (source.tags.length > 0 && !source.prImage) {
    return {
      kind: "unavailable",
      conclusion: "action_required",
      reason: "tags are set but pr_image is not: say where CI publishes the PR's images",
    };
  }
  const overrides = new Map(
    source.tags.map((tag) => [
      tag,
      expandImageTemplate(source.prImage!, {
        org: run.subject.owner,
        repo: run.subject.repo,
        pr: run.subject.pr,
        sha: run.subject.headSha,
        tag,
      }),
    ]),
  );
  try {
    const client = options.registry;
    const missing = await missingImages(client, [...overrides.values()], run);
    if (missing.length > 0) return { kind: "images-pending", missing };
    const plan = await resolvePlan({
      payload,
      arch: run.arch,
      overrides,
      registry: client,
      ...discovery(options),
    });
    const baselinePlan =
      run.options.baseline === "payload"
        ? await resolvePlan({ payload, arch: run.arch, registry: client, ...discovery(options) })
        : undefined;
    const executionPlan = await materializePlan({
      plan,
      cacheDir: options.cacheDir,
      registry: client,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(baselinePlan ? { baselinePlan } : {}),
    });
    const prPayload = await prPayloadOf(options, run, payload, overrides);
    return { kind: "ready", plan: executionPlan, ...(prPayload ? { payloads: { pr: prPayload } } : {}) };
  } catch (error) {
    if (error instanceof PayloadError || error instanceof RegistryError) return unavailable(error, run);
    throw error;
  }
}

/**
 * The payload the PR arm's clusters install: the PR's images in the base payload (CI's published
 * one once it checks out, else assembled and pushed), by digest. None when runs get no clusters or
 * the PR overrides nothing; a PR payload that cannot be had fails the plan, because clusters of the
 * released payload would test the PR's tests without its code.
 */
async function prPayloadOf(
  options: ResolverOptions,
  run: PrRun,
  base: string,
  overrides: ReadonlyMap<string, string>,
): Promise<string | undefined> {
  if (overrides.size === 0 || !options.prPayloads?.wanted()) return undefined;
  const { subject, source } = run;
  const prepared = await preparePrPayload({
    base,
    overrides,
    arches: [run.arch],
    ...(source.prPayload
      ? {
          prPayload: expandImageTemplate(source.prPayload, {
            org: subject.owner,
            repo: subject.repo,
            pr: subject.pr,
            sha: subject.headSha,
          }),
        }
      : {}),
    ...(options.prPayloads.repository ? { targetRepository: options.prPayloads.repository } : {}),
    registry: options.registry,
    client: options.registry.client,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return prepared.pullspec;
}

/** A `more` run executes its parent's binaries; retention may have swept them since. */
async function restoredPlan(
  registry: Registry,
  run: RunRecord,
  plan: ExecutionPlan,
): Promise<PlanResolution> {
  try {
    await restorePlanBinaries({ plan, registry });
    return { kind: "ready", plan };
  } catch (error) {
    if (error instanceof PayloadError || error instanceof RegistryError) return unavailable(error, run);
    throw error;
  }
}

async function missingImages(registry: Registry, images: string[], run: RunRecord): Promise<string[]> {
  const results = await Promise.all(
    images.map((reference) =>
      registry.resolveImage({ reference, arch: run.arch }).then(
        () => undefined,
        (error: unknown) => {
          if (error instanceof RegistryError && error.code === "not-found") return reference;
          throw error;
        },
      ),
    ),
  );
  return results.filter((r): r is string => r !== undefined);
}

function unavailable(error: PayloadError | RegistryError, run: RunRecord): PlanResolution {
  const platform = error instanceof RegistryError && error.code === "platform-mismatch";
  return {
    kind: "unavailable",
    conclusion: "failure",
    reason: platform
      ? `the payload or PR images have no ${run.arch} build: ${error.message}`
      : `the plan could not be resolved: ${error.message}`,
  };
}
