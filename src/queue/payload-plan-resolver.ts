import type { AllowedReleases } from "../commands/allowed-releases.ts";
import { chooseRelease } from "../commands/choose-release.ts";
import { describeAllowedReleases } from "../commands/describe-allowed-releases.ts";
import { expandImageTemplate } from "../config/expand-image-template.ts";
import { preparePrPayload } from "../payload/prepare-pr-payload.ts";
import { PayloadError } from "../payload/payload-error.ts";
import { pinPayload } from "../payload/pin-payload.ts";
import { planExecution } from "../payload/plan-execution.ts";
import { readRelease } from "../payload/read-release.ts";
import { releaseRollback } from "../payload/release-rollback.ts";
import { resolvePlan } from "../payload/resolve-plan.ts";
import {
  ReleaseControllerError,
  type LatestRelease,
  type ReleaseController,
} from "../payload/release-controller.ts";
import type { ExtensionImageStreamTag } from "../payload/extension-image-streams.ts";
import type { TagFilter } from "../payload/tag-filter.ts";
import type { Registry } from "../registry/create-registry.ts";
import { RegistryError } from "../registry/registry-error.ts";
import type { PlanResolution, ResolveRunPlan } from "../runs/plan-resolver.ts";
import type { PrRun, RunPayloads, RunRecord } from "../runs/run-record.ts";

interface ResolverOptions {
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
  /** What an upgrade run may start from; absent: no upgrade run is resolved. */
  releases?: AllowedReleases;
}

/** The discovery options every resolvePlan call of a run takes alike (PR and baseline arms). */
const discovery = (options: ResolverOptions) => ({
  ...(options.tagFilter ? { tagFilter: options.tagFilter } : {}),
  ...(options.extensions ? { extensions: options.extensions } : {}),
  ...(options.signal ? { signal: options.signal } : {}),
});

/**
 * Resolves runs from release payloads (src/payload), for every subject. First every payload the
 * run will install or compare — the configured one or its stream's latest, a gate's candidate and
 * baseline, a periodic's, the upgrade's start — is pinned to the digest its tag names now, through
 * the guarded registry client; plans are read from those digests and the run records them, so its
 * clusters, history and report all speak of the same payloads. Then:
 * - a PR run: the PR's images for the repository's tags (from the pr_image template) override the
 *   payload's; with baseline=payload the released binaries run beside them. A PR image that does
 *   not exist yet means "wait", not "fail".
 * - a gate run: the candidate payload is the "pr" arm (components whose binaries differ from the
 *   baseline's are its overrides), the baseline payload the "baseline" arm unless it is the same;
 * - a periodic run: the stream's payload alone, as the "pr" arm (compared with the stream's history);
 * - a run that already has its plan (`more`): that plan.
 * A payload that cannot be pinned ends the run with the reason, before any cluster is asked for.
 * Plans name each binary by its image (digest and path for the run's arch); no binary is fetched
 * here: a build-farm pod copies it out of its image, the local executor fetches what it runs.
 */
export function createPayloadPlanResolver(options: ResolverOptions): ResolveRunPlan {
  return async ({ run, signal }) => {
    if (run.plan) return { kind: "ready", plan: run.plan };
    const scoped = { ...options, signal };
    try {
      const payloads = await pinRunPayloads(scoped, run);
      if ("kind" in payloads) return payloads;
      const resolution =
        run.subject.kind === "pr"
          ? await resolvePrPlan(scoped, run as PrRun, payloads)
          : await resolvePayloadPlan(scoped, run, payloads);
      return await refuseRollingBack(scoped, run, resolution);
    } catch (error) {
      if (error instanceof PayloadError || error instanceof RegistryError) return unavailable(error, run);
      throw error;
    }
  };
}

type PinnedPayloads = RunPayloads & { pr: string; baseline: string };

/** Every payload of the run by digest, or why the run cannot go ahead. */
async function pinRunPayloads(
  options: ResolverOptions,
  run: RunRecord,
): Promise<PinnedPayloads | Extract<PlanResolution, { kind: "unavailable" }>> {
  const pin = (pullspec: string, what: string) =>
    pinPayload({ registry: options.registry, pullspec, arch: run.arch, what });
  const upgradeFrom = run.options.upgradeFrom;
  const start = upgradeFrom === undefined ? undefined : await upgradeStart(options, upgradeFrom);
  if (typeof start === "object") return start;
  const pinnedStart = start === undefined ? {} : { upgradeFrom: await pin(start, "the upgrade's start") };
  const subject = run.subject;
  switch (subject.kind) {
    case "gate": {
      const [pr, baseline] = await Promise.all([
        pin(subject.payload, "the candidate payload"),
        pin(subject.baselinePayload, "the baseline payload"),
      ]);
      return { pr, baseline, ...pinnedStart };
    }
    case "periodic": {
      const payload = await pin(subject.payload, "the payload");
      return { pr: payload, baseline: payload, release: subject.release, ...pinnedStart };
    }
    case "pr": {
      const base = await basePayload(options, run as PrRun);
      if ("kind" in base) return base;
      const baseline = await pin(base.pullspec, "the payload");
      return { pr: baseline, baseline, ...(base.release ? { release: base.release } : {}), ...pinnedStart };
    }
  }
}

/** A PR run's payload: the configured one, or its release stream's latest as the release-controller names it. */
async function basePayload(
  options: ResolverOptions,
  run: PrRun,
): Promise<{ pullspec: string; release?: string } | Extract<PlanResolution, { kind: "unavailable" }>> {
  const { source } = run;
  if (source.payload) return { pullspec: source.payload };
  if (source.releaseStream && options.releaseController) {
    const latest = await latestOf(options.releaseController, source.releaseStream);
    return "kind" in latest ? latest : { pullspec: latest.pullSpec, release: latest.name };
  }
  return {
    kind: "unavailable",
    conclusion: "action_required",
    reason: source.releaseStream
      ? `release_stream ${source.releaseStream} cannot be resolved: this bot has no release-controller configured; set payload to a pullspec`
      : "no payload to test against: set payload in .github/network-stress.yml",
  };
}

/**
 * The pullspec an upgrade run starts from — an allowed stream's latest, or an allowed release
 * repository's image — or why it may not start there: upgrade-from comes from commenters and
 * repositories, and the bot installs it on clusters as cluster-admin.
 */
async function upgradeStart(
  options: ResolverOptions,
  selector: string,
): Promise<string | Extract<PlanResolution, { kind: "unavailable" }>> {
  const releases = options.releases ?? { repositories: [], streams: [] };
  const choice = chooseRelease(selector, releases);
  if (!choice) {
    return {
      kind: "unavailable",
      conclusion: "action_required",
      reason: `upgrade-from=${selector} is not a release this bot's operator allows; it may be ${describeAllowedReleases(releases)}`,
    };
  }
  if (choice.kind === "pullspec") return choice.pullspec;
  if (!options.releaseController) {
    return {
      kind: "unavailable",
      conclusion: "action_required",
      reason: `upgrade-from=${selector} names release stream ${choice.stream}, but this bot has no release-controller configured`,
    };
  }
  const latest = await latestOf(options.releaseController, choice.stream);
  return "kind" in latest ? latest : latest.pullSpec;
}

/** A stream's latest release, or the release-controller's failure as a reason (an unknown stream is the caller's). */
async function latestOf(
  releaseController: ReleaseController,
  stream: string,
): Promise<LatestRelease | Extract<PlanResolution, { kind: "unavailable" }>> {
  try {
    return await releaseController.latest(stream);
  } catch (error) {
    if (!(error instanceof ReleaseControllerError)) throw error;
    return {
      kind: "unavailable",
      conclusion: error.code === "unknown-stream" ? "action_required" : "failure",
      reason: error.message,
    };
  }
}

async function resolvePayloadPlan(
  options: ResolverOptions,
  run: RunRecord,
  payloads: PinnedPayloads,
): Promise<PlanResolution> {
  const registry = options.registry;
  const { pr: payload, baseline: baselinePayload } = payloads;
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
  const executionPlan = await planExecution({ plan, ...(baselinePlan ? { baselinePlan } : {}) });
  const names = { pr: plan.payload.name, baseline: (plan.baseline ?? plan.payload).name };
  return { kind: "ready", plan: executionPlan, payloads: { ...payloads, names } };
}

async function resolvePrPlan(
  options: ResolverOptions,
  run: PrRun,
  payloads: PinnedPayloads,
): Promise<PlanResolution> {
  const { source } = run;
  const payload = payloads.baseline;
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
  const executionPlan = await planExecution({ plan, ...(baselinePlan ? { baselinePlan } : {}) });
  const prPayload = await prPayloadOf(options, run, payload, overrides);
  // The PR payload is the payload with the PR's images: the same release, whatever CI names it.
  const names = { pr: plan.payload.name, baseline: plan.payload.name };
  return {
    kind: "ready",
    plan: executionPlan,
    payloads: { ...payloads, ...(prPayload ? { pr: prPayload } : {}), names },
  };
}

/**
 * An upgrade run whose start is a newer release than a payload its clusters upgrade to would roll
 * them back, which OpenShift does not do (the cluster-version operator lets the bot's forced
 * update through, unsupported): the run ends, asking for an older start, before any cluster.
 */
async function refuseRollingBack(
  options: ResolverOptions,
  run: RunRecord,
  resolution: PlanResolution,
): Promise<PlanResolution> {
  if (resolution.kind !== "ready") return resolution;
  const { upgradeFrom, names } = resolution.payloads ?? {};
  if (!upgradeFrom || !names) return resolution;
  const start = await readRelease({ registry: options.registry, reference: upgradeFrom, arch: run.arch });
  for (const arm of ["pr", "baseline"] as const) {
    const rollback = releaseRollback(start.identity.name, names[arm]);
    if (rollback)
      return {
        kind: "unavailable",
        conclusion: "action_required",
        reason: `upgrade-from=${run.options.upgradeFrom} starts the clusters on ${start.identity.name}, and the ${arm} arm upgrades them to ${names[arm]}: ${rollback}. Upgrade from an older release`,
      };
  }
  return resolution;
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
  if (error instanceof PayloadError && error.code === "unresolved-payload") {
    // A tag nobody published, or a registry the bot does not read, is the configuration's to fix.
    const cause = error.cause instanceof RegistryError ? error.cause.code : undefined;
    const fixable = cause === "not-found" || cause === "refused" || cause === "invalid-reference";
    return {
      kind: "unavailable",
      conclusion: fixable ? "action_required" : "failure",
      reason: error.message,
    };
  }
  const platform = error instanceof RegistryError && error.code === "platform-mismatch";
  return {
    kind: "unavailable",
    conclusion: "failure",
    reason: platform
      ? `the payload or PR images have no ${run.arch} build: ${error.message}`
      : `the plan could not be resolved: ${error.message}`,
  };
}
