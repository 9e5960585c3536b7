import type { Logger } from "pino";
import type { ClusterSourceConfig } from "../farm/farm-config.ts";
import { createLeaseKeeper } from "../farm/lease-keeper.ts";
import { ClustersUnavailableError } from "../runs/clusters-unavailable-error.ts";
import type { ClusterLease, ClusterProvider, ProvisionProgress } from "../runs/clusters-under-test.ts";
import type { ClusterLeaseKey, ClusterLeases } from "./cluster-leases.ts";
import type { ClusterSource, ClusterTiming, SourceContext, SourceLease } from "./cluster-source.ts";
import { createHiveSource } from "./hive-source.ts";
import { createKubeObjects } from "./kube-objects.ts";
import { createStaticSource } from "./static-source.ts";

const DEFAULT_TIMING: ClusterTiming = { pollMs: 10_000, healthPollMs: 30_000, lostAfterFailures: 3 };
/** The order phases are told in while clusters are on their way: the slowest wins. */
const PHASE_ORDER: ProvisionProgress["phase"][] = ["queued", "installing", "upgrading", "ready"];

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

  return {
    name: "clusters",
    async acquire(request) {
      const sources = current();
      const slots = Array.from({ length: request.count }, (_, i) => i);
      const phases = new Map<number, { phase: ProvisionProgress["phase"]; detail?: string }>();
      let told: { phase: ProvisionProgress["phase"]; since: string } | undefined;
      const tell = () => {
        const ready = [...phases.values()].filter((p) => p.phase === "ready").length;
        const slowest = [...phases.values()].sort(
          (a, b) => PHASE_ORDER.indexOf(a.phase) - PHASE_ORDER.indexOf(b.phase),
        )[0] ?? { phase: "ready" as const };
        if (told?.phase !== slowest.phase) told = { phase: slowest.phase, since: new Date().toISOString() };
        request.onProgress?.({
          arm: request.arm,
          arch: request.arch,
          wanted: request.count,
          ready,
          phase: slowest.phase,
          since: told.since,
          ...(slowest.detail ? { detail: slowest.detail } : {}),
        });
      };
      const had: SourceLease[] = [];
      const why: string[] = [];
      const tiers: { type: "static" | "hive"; allowUpgrade: boolean }[] = [
        { type: "static", allowUpgrade: false },
        { type: "hive", allowUpgrade: false },
        { type: "static", allowUpgrade: true },
      ];
      try {
        for (const tier of tiers) {
          for (const source of sources.filter((s) => typeOf(s.name) === tier.type)) {
            const open = slots.filter((slot) => !had.some((l) => l.slot === slot));
            if (open.length === 0) break;
            request.signal.throwIfAborted();
            const result = await source.acquire({
              ...request,
              slots: open,
              allowUpgrade: tier.allowUpgrade,
              progress: (slot, phase, detail) => {
                phases.set(slot, { phase, ...(detail ? { detail } : {}) });
                tell();
              },
            });
            for (const lease of result.leases) phases.set(lease.slot, { phase: "ready" });
            had.push(...result.leases);
            if (result.why && !why.includes(result.why)) why.push(result.why);
          }
        }
        if (had.length < request.count) {
          throw new ClustersUnavailableError(
            `${had.length} of ${request.count} ${request.arch} clusters running ${request.payload} for the ${request.arm} arm: ${
              sources.length === 0 ? "no cluster source is configured" : why.join("; ")
            }`,
          );
        }
      } catch (error) {
        await Promise.allSettled(had.map((l) => l.release()));
        if (request.signal.aborted || error instanceof ClustersUnavailableError) throw error;
        throw new ClustersUnavailableError(
          `clusters for the ${request.arm} arm: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
      tell();
      return had
        .sort((a, b) => a.slot - b.slot)
        .map(({ cluster, lost, release }): ClusterLease => ({ cluster, lost, release }));
    },
    async reconcile(active) {
      let released = 0;
      for (const source of current()) {
        try {
          released += await source.reconcile(active);
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
