import { Option, type Command } from "commander";
import { join } from "node:path";
import { hostArch, parseArch, type Arch } from "@netstress/core/arch/arch.ts";
import type { ResolvedPlan } from "../../payload/resolved-plan.ts";
import type { Registry } from "../../registry/create-registry.ts";
import type { ResolvePlanOptions } from "../../payload/resolve-plan.ts";
import { tagFilterFromEnv } from "../../payload/tag-filter.ts";
import type { ExecutionPlan, TestSelection } from "@netstress/core/model/execution-plan.ts";
import { addSelectionOptions, selectionFromFlags, type SelectionFlags } from "../selection-options.ts";
import { UsageError } from "../usage-error.ts";

/** The flags `plan` and `run` share to resolve a plan from a payload. */
export interface PayloadFlags {
  payload: string;
  arch?: string;
  override: string[];
  baselinePayload?: string;
  testBinaries?: string;
  extensionImagestream?: string[];
  cacheDir?: string;
}

interface PlanFlags extends PayloadFlags, SelectionFlags {
  output: "table" | "json";
  images?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** Adds the payload flags (all but --arch, which `run` has already) to `plan`, and to `run`. */
export function addPayloadOptions(command: Command, options: { payloadRequired: boolean }): Command {
  const payload = new Option("--payload <REF>", "release payload: registry reference or oci:DIR[:NAME]");
  if (options.payloadRequired) payload.makeOptionMandatory();
  return command
    .addOption(payload)
    .option(
      "--override <TAG=PULLSPEC>",
      "take TAG's binary from this image (a PR build); repeatable; EXTENSIONS_PAYLOAD_OVERRIDE_<tag> works too",
      collect,
      [],
    )
    .option(
      "--baseline-payload <REF>",
      "the released payload; tags of --payload that differ from it count as overrides",
    )
    .option(
      "--test-binaries <FILE>",
      "tag → test binary path registry (JSON/YAML; default: openshift/origin's table)",
    )
    .option(
      "--extension-imagestream <FILE>",
      "ImageStream(s) whose tags annotated testextension.redhat.io/component and /binary name extensions outside the payload; repeatable",
      collect,
      [],
    )
    .option("--cache-dir <DIR>", "content-addressed image cache (default: $XDG_CACHE_HOME/netstress)");
}

/**
 * What the flags and the environment say about discovery, beside the payload and overrides: the
 * table, EXTENSION_BINARY_OVERRIDE_INCLUDE_TAGS / _EXCLUDE_TAGS, and the ImageStream extensions.
 */
async function discoveryOptions(
  flags: PayloadFlags,
  env: NodeJS.ProcessEnv,
): Promise<Pick<ResolvePlanOptions, "testBinaries" | "tagFilter" | "extensions">> {
  const extensions = (
    await Promise.all(
      (flags.extensionImagestream ?? []).map(async (path) =>
        (await import("../../payload/extension-image-streams.ts")).loadExtensionImageStreams(path),
      ),
    )
  ).flat();
  return {
    tagFilter: tagFilterFromEnv(env),
    ...(extensions.length > 0 ? { extensions } : {}),
    ...(flags.testBinaries ? { testBinaries: await loadTestBinaryRegistry(flags.testBinaries) } : {}),
  };
}

/** Resolves the plan the flags describe; `--override` flags win over EXTENSIONS_PAYLOAD_OVERRIDE_* variables. */
export async function resolvePlanFromFlags(
  flags: PayloadFlags,
  options: { env?: NodeJS.ProcessEnv; keepBinaries?: boolean } = {},
): Promise<{
  plan: ResolvedPlan;
  registry: Registry;
  cacheDir: string;
  discovery: Pick<ResolvePlanOptions, "testBinaries" | "tagFilter" | "extensions">;
}> {
  // The payload and registry code loads on use: `run --binary` never needs it, and every test
  // process the runner forks pays for the runner's memory.
  const [
    { mergeOverrides, overridesFromEnv, parseOverrideFlags },
    { resolvePlan },
    { defaultCacheDir },
    { createRegistry },
  ] = await Promise.all([
    import("../../payload/overrides.ts"),
    import("../../payload/resolve-plan.ts"),
    import("../../registry/content-cache.ts"),
    import("../../registry/create-registry.ts"),
  ]);
  const env = options.env ?? process.env;
  let arch: Arch;
  try {
    arch = flags.arch ? parseArch(flags.arch) : hostArch();
  } catch (error) {
    throw new UsageError(`--arch: ${(error as Error).message}`);
  }
  const overrides = mergeOverrides(overridesFromEnv(env), parseOverrideFlags(flags.override));
  const cacheDir = flags.cacheDir ?? defaultCacheDir(env);
  const registry = await createRegistry({ cacheDir });
  const discovery = await discoveryOptions(flags, env);
  const plan = await resolvePlan({
    payload: flags.payload,
    arch,
    overrides,
    registry,
    keepBinaries: options.keepBinaries ?? false,
    ...(flags.baselinePayload ? { baselinePayload: flags.baselinePayload } : {}),
    ...discovery,
  });
  return { plan, registry, cacheDir, discovery };
}

/**
 * `run --payload`: resolves the plan, and with `baseline` the released one beside it (the baseline
 * payload when given, else the payload without overrides), then extracts the binaries for the runner.
 * With both arms, an override whose binary and the released one share a clean source commit runs
 * as released.
 */
export async function executionPlanFromPayload(
  flags: PayloadFlags & { baseline?: boolean },
): Promise<ExecutionPlan> {
  const { plan, registry, cacheDir, discovery } = await resolvePlanFromFlags(flags, { keepBinaries: true });
  const [{ resolvePlan }, { planExecution }, { fetchPlanBinaries }, { settleRebuiltOverrides }] =
    await Promise.all([
      import("../../payload/resolve-plan.ts"),
      import("../../payload/plan-execution.ts"),
      import("../../payload/fetch-plan-binaries.ts"),
      import("../../payload/settle-rebuilt-overrides.ts"),
    ]);
  const baselinePlan = flags.baseline
    ? await resolvePlan({
        payload: flags.baselinePayload ?? flags.payload,
        arch: plan.arch,
        registry,
        keepBinaries: true,
        ...discovery,
      })
    : undefined;
  for (const c of plan.components.filter((c) => !c.available)) {
    process.stderr.write(`netstress: ${c.tag} is left out: ${c.reason ?? "unavailable"}\n`);
  }
  // This machine runs the binaries: it fetches them (the planning above kept them in the cache).
  const execution = await fetchPlanBinaries({
    plan: await planExecution({ plan, ...(baselinePlan ? { baselinePlan } : {}) }),
    registry: registry.withBudget({}),
    outDir: join(cacheDir, "binaries"),
  });
  // The binaries are here anyway: their own source tells a rebuild from a change better than labels.
  return baselinePlan ? settleRebuiltOverrides({ plan: execution, cacheDir }) : execution;
}

export function registerPlanCommand(program: Command): void {
  const command = program
    .command("plan")
    .description(
      "Discover the payload's test-carrying components (referrers, the conventional path, the table, ImageStreams) and which binary each runs: the PR's (override) or the released one",
    );
  addSelectionOptions(addPayloadOptions(command, { payloadRequired: true }))
    .option("--arch <ARCH>", "architecture to plan for (default: this host's)")
    .addOption(
      new Option("-o, --output <FORMAT>", "output format").choices(["table", "json"]).default("table"),
    )
    .option(
      "--images",
      "also extract every binary (through the cache) and ask it: the test images each component's tests use (`images`), and its build source (`info`), which tells a rebuild from the same source from a real override",
    )
    .action(async (flags: PlanFlags) => {
      const selection = selectionFromFlags(flags);
      const resolved = await resolvePlanFromFlags(flags, { keepBinaries: flags.images ?? false });
      const plan = flags.images ? await inspectBinaries(flags, resolved) : resolved.plan;
      const { formatPlanTable } = await import("../../payload/format-plan-table.ts");
      process.stdout.write(
        flags.output === "json"
          ? `${JSON.stringify(selection ? { ...plan, selection } : plan, null, 2)}\n`
          : formatPlanTable(plan) + (selection ? describeSelection(selection) : ""),
      );
      // A plan with nothing to run is a failure; a partial one is not (it says what is missing).
      process.exitCode = plan.components.some((c) => c.available) ? 0 : 1;
    });
}

/**
 * `plan --images`: runs each component's binary (`info`, `images`), and for overrides also the
 * released binary of the same tag (from the baseline payload, else the payload without overrides)
 * to compare their build sources.
 */
async function inspectBinaries(
  flags: PayloadFlags,
  resolved: Awaited<ReturnType<typeof resolvePlanFromFlags>>,
): Promise<ResolvedPlan> {
  const { plan, registry, cacheDir, discovery } = resolved;
  const [{ resolvePlan }, { inspectPlanBinaries }] = await Promise.all([
    import("../../payload/resolve-plan.ts"),
    import("../../payload/inspect-plan-binaries.ts"),
  ]);
  const compares = plan.components.some((c) => c.source === "override" || c.rebuiltFromSameSource);
  const releasedPlan = compares
    ? await resolvePlan({
        payload: flags.baselinePayload ?? flags.payload,
        arch: plan.arch,
        registry,
        keepBinaries: true,
        ...discovery,
      })
    : undefined;
  return inspectPlanBinaries({ plan, registry, cacheDir, ...(releasedPlan ? { releasedPlan } : {}) });
}

/** One line saying which tests the runner will take from the binaries. */
function describeSelection(selection: TestSelection): string {
  const environment = Object.entries(selection.environment ?? {})
    .map(
      ([key, value]) =>
        `${key}=${Array.isArray(value) ? value.join(",") : typeof value === "object" ? JSON.stringify(value) : value}`,
    )
    .join(" ");
  return (
    `selection: ${selection.suite ? `suite ${selection.suite}` : "every listed test"}; ` +
    `[Disruptive] tests ${selection.includeDisruptive ? "included" : "left out"}` +
    (environment ? `; environment ${environment}` : "") +
    "\n"
  );
}

async function loadTestBinaryRegistry(path: string) {
  return (await import("../../payload/test-binary-registry.ts")).loadTestBinaryRegistry(path);
}
