import type { Arm } from "@netstress/core/model/result-record.ts";
import { payloadDigest } from "../registry/same-payload.ts";
import { armPayload } from "../runs/arm-payload.ts";
import { ClustersUnavailableError } from "../runs/clusters-unavailable-error.ts";
import type { ArmLeases, ClusterLease, ClusterProvider } from "../runs/clusters-under-test.ts";
import type { RunRecord } from "../runs/run-record.ts";
import { runWording } from "../runs/run-wording.ts";
import type { CapacityReservation, Shard, ShardExecutor } from "../runs/shard-executor.ts";
import { acquireClusters, type HeldLeases } from "./acquire-clusters.ts";
import type { RunDeps } from "./run-deps.ts";
import type { RunProgressUpdates } from "./run-progress-updates.ts";
import type { RunSignal } from "./run-signal.ts";
import type { StepEnd } from "./step-end.ts";

/** The clusters under test a run holds while it executes (none without a cluster source). */
export interface RunClusters {
  /** Whether a cluster source serves the run. */
  readonly served: boolean;
  /**
   * Whether what the run is told may carry infrastructure detail (hub namespaces, Secret and object
   * names): not on a public repository's check run, which anyone reads.
   */
  readonly detailed: boolean;
  /** Each arm's leases once held (shared clusters: the PR arm's); undefined before, and without a source. */
  readonly held: ArmLeases | undefined;
  /**
   * Takes the build-farm capacity of the shard's first iterations, then `count` clusters per arm
   * (shared: one set both arms run on), and records them. "held" at once without a cluster source.
   */
  hold(shard: Shard, count: number, shared: boolean): Promise<"held" | StepEnd>;
  /**
   * Crossover by upgrade: `count` more clusters numbered from `firstSlot` (a resumed run gets its
   * own again), started on the baseline arm's payload for the run to move to the PR arm's; recorded
   * as shared (both arms run on each, one after the other). Only clusters their source may move.
   * `on: "pr"`: started on the PR arm's payload instead, for a PR half the stream's history stands
   * against (never moved).
   */
  start(
    shard: Shard,
    count: number,
    firstSlot: number,
    on?: "baseline" | "pr",
  ): Promise<ClusterLease[] | StepEnd>;
  /** A cluster this process holds, by id. */
  lease(id: string): ClusterLease | undefined;
  /** Gives these clusters back now (done with, or not fit to go on) and records when. */
  giveBack(ids: readonly string[]): Promise<void>;
  /**
   * Gives the clusters back (once) and records when, for the run's cluster-hours. Not when this
   * process is stopping: the worker that resumes the run adopts them (a cluster's names and lease
   * are its run's) instead of installing new ones; if the run ends meanwhile, start-up
   * reconciliation gives them back, and unrenewed leases lapse.
   */
  release(): Promise<void>;
}

/**
 * Runs `body` with the run's clusters as a scoped resource: whatever `body` holds is given back
 * (see RunClusters.release) however it ends, a thrown error included, and so is the build-farm
 * capacity taken for them that its Jobs did not use.
 */
export async function withRunClusters<T>(
  input: {
    deps: RunDeps;
    started: RunRecord;
    provider: ClusterProvider | undefined;
    executor: ShardExecutor;
    stop: RunSignal;
    progress: RunProgressUpdates;
  },
  body: (clusters: RunClusters) => Promise<T>,
): Promise<T> {
  const { deps, started, provider, executor, stop, progress } = input;
  const runId = started.id;
  /** What the run holds, in the order acquired: the first is what hold() took. */
  let groups: HeldLeases[] = [];
  /** Build-farm capacity taken before the clusters; what the shard's Jobs did not use goes back at the end. */
  let capacity: CapacityReservation | undefined;
  /** See RunClusters.detailed. */
  const detailed = started.subject.kind !== "pr" || started.subject.privateRepository === true;

  const acquire = async (
    shard: Shard,
    arms: { arm: Arm; payload: string | undefined; upgradeTarget?: string | undefined; moves?: boolean }[],
    count: number,
    held: { shared: boolean; firstSlot?: number },
  ): Promise<HeldLeases | StepEnd> => {
    // Clusters are compared by digest: a tag the resolve stage did not pin would match none.
    const unpinned = arms.find((a) => a.payload !== undefined && payloadDigest(a.payload) === undefined);
    if (unpinned) {
      return {
        failure: `the ${unpinned.arm} arm's payload ${unpinned.payload} was not resolved to a digest, and clusters under test are matched by digest: run it again`,
      };
    }
    // A cluster started on the baseline payload to be moved to the PR payload (`moves`) installs
    // the baseline arm's payload: its progress is the baseline arm's, so that the run says which
    // payload installs, and a PR half's new clusters installing at the same time keep their own.
    const shownArm = (arm: Arm): Arm => (arms.find((a) => a.arm === arm)?.moves ? "baseline" : arm);
    let got: HeldLeases;
    try {
      // Clusters cost cloud hours from the moment they exist: ask for them only once the
      // build farm has taken the capacity of the iterations that will run on them.
      for (const { arm } of arms) {
        progress.provisioning({
          arm: shownArm(arm),
          arch: started.arch,
          wanted: count,
          ready: 0,
          phase: "queued",
          since: new Date().toISOString(),
          detail: "waiting for build-farm capacity",
        });
      }
      capacity ??= await executor.reserveCapacity?.({
        shard,
        jobs: Math.min(shard.iterations.count, count),
        signal: stop.signal,
      });
      got = await acquireClusters({
        provider: provider!,
        runId,
        arch: started.arch,
        arms,
        count,
        ...(held.firstSlot !== undefined ? { firstSlot: held.firstSlot } : {}),
        kind: started.subject.kind,
        signal: stop.signal,
        onProgress: ({ detail, ...rest }) => {
          const p = { ...rest, arm: shownArm(rest.arm) };
          // A cluster on its way names hub objects (pools, deployments): a public check run says
          // only how far it is; waiting for a quota says nothing of the hub and stays.
          progress.provisioning(
            detailed || p.phase === "queued" ? { ...p, ...(detail ? { detail } : {}) } : p,
          );
        },
        onReleaseError: (error, lease) =>
          deps.log.warn({ err: error, cluster: lease.cluster.id }, "cluster not given back"),
      });
    } catch (error) {
      await progress.flush();
      if (stop.signal.aborted) return "stopped";
      if (!(error instanceof ClustersUnavailableError)) throw error;
      // The short reason on a public check run, the detail in the logs (see `detailed`).
      deps.log.warn({ err: error, runId }, "no clusters under test for the run");
      return {
        failure: runWording.clustersUnavailable(
          started,
          detailed
            ? error.message
            : (error.reason ?? "the cluster sources could not provide them (the bot's logs say why)"),
        ),
      };
    }
    groups.push(got);
    // Acquired clusters end their arm's provisioning (clusters-acquired); a moved cluster's shows
    // as the baseline arm's, which ends here.
    for (const { arm } of arms.filter((a) => a.moves))
      progress.provisioning({
        arm: shownArm(arm),
        arch: started.arch,
        wanted: count,
        ready: count,
        phase: "ready",
        since: new Date().toISOString(),
      });
    await progress.flush();
    await deps.store.apply(runId, {
      type: "clusters-acquired",
      clusters: Object.entries(got.byArm).flatMap(([arm, armLeases]) =>
        armLeases.map((l, index) => ({
          arm: arm as Arm,
          ...(held.shared ? { shared: true } : {}),
          id: l.cluster.id,
          source: l.cluster.source,
          payload: l.cluster.payload,
          ...(held.firstSlot !== undefined ? { slot: held.firstSlot + index } : {}),
          acquiredAt: new Date().toISOString(),
        })),
      ),
    });
    return got;
  };
  /** Given back before the run's end (each lease's release is idempotent: releaseAll may ask again). */
  const givenBack = new Set<string>();
  const all = () =>
    groups.flatMap((g) => Object.values(g.byArm).flat()).filter((l) => !givenBack.has(l.cluster.id));

  const clusters: RunClusters = {
    served: provider !== undefined,
    detailed,
    get held() {
      return groups[0]?.byArm;
    },
    async hold(shard, count, shared) {
      if (!provider) return "held";
      // An upgrade run's clusters all start at its upgradeFrom; the tests upgrade each arm's.
      const arms = (shared ? (["pr"] as const) : shard.arms).map((arm) =>
        started.options.upgradeFrom
          ? {
              arm,
              payload: started.payloads?.upgradeFrom ?? started.options.upgradeFrom,
              upgradeTarget: armPayload(started, arm),
            }
          : { arm, payload: armPayload(started, arm) },
      );
      const got = await acquire(shard, arms, count, { shared });
      return typeof got === "object" && "byArm" in got ? "held" : got;
    },
    async start(shard, count, firstSlot, on = "baseline") {
      // The lease's health watch accepts the PR arm's payload too: the run moves the cluster there.
      const arms = [
        on === "pr"
          ? { arm: "pr" as const, payload: armPayload(started, "pr") }
          : {
              arm: "pr" as const,
              payload: armPayload(started, "baseline"),
              upgradeTarget: armPayload(started, "pr"),
              moves: true,
            },
      ];
      const got = await acquire(shard, arms, count, { shared: true, firstSlot });
      return typeof got === "object" && "byArm" in got ? (got.byArm.pr ?? []) : got;
    },
    lease: (id) => all().find((l) => l.cluster.id === id),
    async giveBack(ids) {
      const wanted = new Set(ids);
      const leases = all().filter((l) => wanted.has(l.cluster.id));
      if (leases.length === 0) return;
      await Promise.all(
        leases.map((lease) =>
          lease
            .release()
            .catch((error: unknown) =>
              deps.log.warn({ err: error, cluster: lease.cluster.id }, "cluster not given back"),
            ),
        ),
      );
      for (const lease of leases) givenBack.add(lease.cluster.id);
      await deps.store.apply(runId, { type: "clusters-released", ids: leases.map((l) => l.cluster.id) });
    },
    async release() {
      if (groups.length === 0) return;
      const releasing = groups;
      groups = [];
      if (stop.stopped()?.kind === "shutdown") return;
      const ids = (await Promise.all(releasing.map((g) => g.releaseAll()))).flat();
      if (ids.length > 0) await deps.store.apply(runId, { type: "clusters-released", ids });
    },
  };

  try {
    return await body(clusters);
  } finally {
    // Whatever happened (a thrown error included), no cluster stays held.
    await clusters
      .release()
      .catch((error: unknown) => deps.log.error({ err: error }, "clusters not released"));
    await capacity
      ?.release()
      .catch((error: unknown) => deps.log.warn({ err: error }, "build-farm capacity not given back"));
  }
}
