import type { Logger } from "pino";
import type { ClusterSourceConfig } from "./cluster-sources-config.ts";
import { createLeaseKeeper } from "@netstress/core/kube/lease-keeper.ts";
import { ClustersUnavailableError } from "../runs/clusters-unavailable-error.ts";
import type { ClusterLease, ClusterProvider, ProvisionProgress } from "../runs/clusters-under-test.ts";
import type { ClusterLeaseKey, ClusterLeases } from "./cluster-leases.ts";
import type { ClusterSource, ClusterTiming, SourceContext, SourceLease } from "./cluster-source.ts";
import { createHiveSource } from "./hive-source.ts";
import { createKubeObjects } from "@netstress/core/kube/kube-objects.ts";
import { ClusterLeaseLapsed } from "./cluster-lease-lapsed.ts";
import { reserveQuota } from "./reserve-quota.ts";
import { createStaticSource } from "./static-source.ts";

const DEFAULT_TIMING: ClusterTiming = { pollMs: 10_000, healthPollMs: 30_000, lostAfterFailures: 3 };
/** The order phases are told in while clusters are on their way: the slowest wins. */
const PHASE_ORDER: ProvisionProgress["phase"][] = ["queued", "installing", "upgrading", "ready"];
/** Hive's conditions for an install that never finishes: their names say why and name nothing of the hub. */
const INSTALL_FAILURE =
  /\b(InstallImagesNotResolved|AuthenticationFailure|RequirementsMet|ProvisionStopped|ProvisionFailed)\b/;
const installFailure = (detail: string) => {
  const condition = INSTALL_FAILURE.exec(detail)?.[1];
  return condition ? `: install failed (${condition})` : "";
};

/**
 * The clusters under test of every configured source (hot reloaded): for a request, static
 * clusters already running the payload first, then Hive, then static clusters that may be moved
 * to it. All or nothing: when not every wanted cluster can be had, what was had is given back and
 * ClustersUnavailableError says why, source by source.
 */
export function createClusterProvider(options: {
  sources: () => readonly ClusterSourceConfig[];
  /** Where the leases live: Redis for the bot's replicas (createClusterLeases), memory for one process. */
  leases: ClusterLeases;
  /** Which bot deployment (its Redis prefix) owns what the sources create. */
  prefix: string;
  logger: Logger;
  timing?: Partial<ClusterTiming>;
  /** Bound of every API call. */
  timeoutMs?: number;
  /** Sees every API call, e.g. to count them per cluster. */
  onCall?: (api: string, call: string) => void;
}): ClusterProvider & { stop(): void } {
  const { logger, leases } = options;
  const keeper = createLeaseKeeper<ClusterLeaseKey>({
    ledger: leases,
    leaseMs: leases.leaseMs,
    logger,
    id: (l) => `${l.pool}|${l.runId}|${l.holder}`,
    lapsedError: (l) => new ClusterLeaseLapsed(l),
  });
  const context: SourceContext = {
    instance: options.prefix,
    leases,
    keeper,
    timing: { ...DEFAULT_TIMING, ...options.timing },
    logger,
    connect: (name, kubeconfig) =>
      createKubeObjects({
        name,
        kubeconfig,
        timeoutMs: options.timeoutMs ?? 30_000,
        onCall: options.onCall && ((call) => options.onCall!(name, call)),
      }),
  };
  const built = new Map<string, { json: string; source: ClusterSource }>();
  const current = (): ClusterSource[] => {
    const configs = options.sources();
    // A changed source is built anew; the old one finishes what it was doing (its poller idles
    // once nobody waits on it), so a reload never strands a cluster on its way.
    for (const [name, entry] of built) {
      if (!configs.some((c) => c.name === name && JSON.stringify(c) === entry.json)) built.delete(name);
    }
    return configs.map((config) => {
      const json = JSON.stringify(config);
      let entry = built.get(config.name);
      if (!entry) {
        const source =
          config.type === "static"
            ? createStaticSource({ config, context })
            : createHiveSource({ config, context });
        built.set(config.name, (entry = { json, source }));
      }
      return entry.source;
    });
  };
  const typeOf = (name: string) => options.sources().find((c) => c.name === name)?.type;
  /** The largest quota (Hive) or count (static, upgrade: true) of a source whose clusters may be moved. */
  const movableAtOnce = () =>
    Math.max(
      0,
      ...options
        .sources()
        .map((c) =>
          c.type === "hive" ? c.maxClusters : c.clusters.filter((cluster) => cluster.upgrade).length,
        ),
    );

  return {
    name: "clusters",
    async acquire(request) {
      const sources = current();
      const slots = Array.from({ length: request.count }, (_, i) => (request.firstSlot ?? 0) + i);
      const arms = request.arms.map(({ arm, payload, upgradeTarget, moves }) => ({
        arm,
        payload,
        upgradeTarget,
        moves,
        had: [] as SourceLease[],
        why: [] as string[],
        /** The same in short, for a public repository's check run. */
        reasons: [] as string[],
        phases: new Map<number, { phase: ProvisionProgress["phase"]; detail?: string }>(),
        told: undefined as { phase: ProvisionProgress["phase"]; since: string } | undefined,
      }));
      type ArmState = (typeof arms)[number];
      const tell = (state: ArmState) => {
        const phases = [...state.phases.values()];
        const ready = phases.filter((p) => p.phase === "ready").length;
        const slowest = phases.sort(
          (a, b) => PHASE_ORDER.indexOf(a.phase) - PHASE_ORDER.indexOf(b.phase),
        )[0] ?? {
          phase: "ready" as const,
        };
        if (state.told?.phase !== slowest.phase)
          state.told = { phase: slowest.phase, since: new Date().toISOString() };
        request.onProgress?.({
          arm: state.arm,
          arch: request.arch,
          wanted: request.count,
          ready,
          phase: slowest.phase,
          since: state.told.since,
          ...(slowest.detail ? { detail: slowest.detail } : {}),
        });
      };
      const open = (state: ArmState) => slots.filter((slot) => !state.had.some((l) => l.slot === slot));
      const quotaKey = (source: string, arm: ArmState["arm"], slot: number): ClusterLeaseKey => ({
        pool: source,
        runId: request.runId,
        holder: `${arm}/${slot}`,
        payload: "",
      });
      const tiers: { type: "static" | "hive"; allowUpgrade: boolean }[] = [
        { type: "static", allowUpgrade: false },
        { type: "hive", allowUpgrade: false },
        { type: "static", allowUpgrade: true },
      ];
      /** A run waits for one quota only (the first it needs), so that it never holds one while waiting for another. */
      let waited = false;
      const all = () => arms.flatMap((a) => a.had);
      try {
        for (const tier of tiers) {
          for (const source of sources.filter((s) => typeOf(s.name) === tier.type)) {
            const wanting = arms.filter((a) => open(a).length > 0);
            if (wanting.length === 0) break;
            request.signal.throwIfAborted();
            const config = options.sources().find((c) => c.name === source.name);
            const reserved =
              config?.type === "hive"
                ? wanting.flatMap((a) => open(a).map((slot) => quotaKey(source.name, a.arm, slot)))
                : [];
            if (config?.type === "hive") {
              if (reserved.length > config.maxClusters) {
                for (const a of wanting) {
                  const why = `${source.name}: the run needs ${reserved.length} of its clusters at once, more than its maxClusters (${config.maxClusters})`;
                  a.why.push(why);
                  a.reasons.push(why);
                }
                continue;
              }
              const answer = await reserveQuota({
                leases,
                keeper,
                reservation: {
                  pool: source.name,
                  runId: request.runId,
                  leases: reserved,
                  capacity: config.maxClusters,
                  band: request.kind === undefined || request.kind === "pr" ? 1 : 0,
                  ticketMs: Math.max(leases.leaseMs, 3 * context.timing.pollMs),
                },
                wait: !waited,
                pollMs: context.timing.pollMs,
                signal: request.signal,
                onQueued: (detail) => {
                  for (const a of wanting) {
                    for (const slot of open(a)) a.phases.set(slot, { phase: "queued", detail });
                    tell(a);
                  }
                },
              });
              waited = true;
              if (!answer.granted) {
                for (const a of wanting) {
                  const why = `${source.name}: quota ${answer.held}/${config.maxClusters} is in use by other runs`;
                  a.why.push(why);
                  a.reasons.push(why);
                }
                continue;
              }
            }
            /** The slots (`<arm>/<slot>`) this source filled. */
            const filled = new Set<string>();
            try {
              const settled = await Promise.allSettled(
                wanting.map(async (state) => {
                  const result = await source.acquire({
                    runId: request.runId,
                    arm: state.arm,
                    arch: request.arch,
                    payload: state.payload,
                    ...(state.upgradeTarget ? { upgradeTarget: state.upgradeTarget } : {}),
                    ...(state.moves ? { moves: true } : {}),
                    count: request.count,
                    signal: request.signal,
                    slots: open(state),
                    allowUpgrade: tier.allowUpgrade,
                    // A gate's "pr" arm is its candidate payload, released like the baseline.
                    prCode: state.arm === "pr" && (request.kind ?? "pr") === "pr",
                    progress: (slot, phase, detail) => {
                      state.phases.set(slot, { phase, ...(detail ? { detail } : {}) });
                      tell(state);
                    },
                  });
                  for (const lease of result.leases) {
                    state.phases.set(lease.slot, { phase: "ready" });
                    filled.add(`${state.arm}/${lease.slot}`);
                  }
                  state.had.push(...result.leases);
                  if (result.why && !state.why.includes(result.why)) state.why.push(result.why);
                  const reason = result.reason ?? (result.why && `${source.name}: no cluster could be had`);
                  if (reason && !state.reasons.includes(reason)) state.reasons.push(reason);
                }),
              );
              const failed = settled.find((r) => r.status === "rejected");
              if (failed) {
                if (request.signal.aborted) throw failed.reason;
                const detail = (failed.reason as Error).message;
                throw new ClustersUnavailableError(
                  failed.reason instanceof ClustersUnavailableError
                    ? detail
                    : `clusters for the run: ${detail}`,
                  {
                    cause: failed.reason,
                    reason: `no cluster of source ${source.name} became ready${installFailure(detail)}`,
                  },
                );
              }
            } finally {
              // What the source did not turn into clusters goes back to the quota at once.
              const unused = reserved.filter((key) => !filled.has(key.holder) && !source.keeps?.(key));
              await Promise.all(unused.map((key) => keeper.release(key)));
            }
          }
        }
        const short = arms.find((a) => a.had.length < request.count);
        if (short) {
          const none = sources.length === 0 ? "no cluster source is configured" : undefined;
          throw new ClustersUnavailableError(
            `${short.had.length} of ${request.count} ${request.arch} clusters running ${short.payload} for the ${short.arm} arm: ${
              none ?? short.why.join("; ")
            }`,
            {
              reason: `${short.had.length} of ${request.count} ${request.arch} clusters for the ${short.arm} arm: ${
                none ?? short.reasons.join("; ")
              }`,
            },
          );
        }
      } catch (error) {
        await Promise.allSettled(all().map((l) => l.release()));
        if (request.signal.aborted || error instanceof ClustersUnavailableError) throw error;
        throw new ClustersUnavailableError(`clusters for the run: ${(error as Error).message}`, {
          cause: error,
          reason: "the cluster sources failed (the bot's logs say why)",
        });
      }
      for (const state of arms) tell(state);
      return Object.fromEntries(
        arms.map((state) => [
          state.arm,
          state.had.sort((a, b) => a.slot - b.slot).map(({ slot: _slot, ...lease }): ClusterLease => lease),
        ]),
      );
    },
    // A Hive source holds at least one cluster (maxClusters ≥ 1): any movable source counts.
    movesClusters: () => movableAtOnce() > 0,
    movableAtOnce,
    async reconcile(activeRuns) {
      let released = 0;
      for (const source of current()) {
        try {
          released += await source.reconcile(activeRuns);
        } catch (error) {
          logger.error(
            { err: error, source: source.name },
            "cluster source not reconciled; trying at the next start",
          );
        }
      }
      if (released > 0) logger.info({ released }, "gave back the clusters of ended runs");
      return { released };
    },
    stop() {
      keeper.stop();
      for (const { source } of built.values()) source.stop();
    },
  };
}
