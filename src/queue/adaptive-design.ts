import { releaseRollback } from "../payload/release-rollback.ts";
import { samePayload } from "../registry/same-payload.ts";
import { armPayload } from "../runs/arm-payload.ts";
import type { ClusterProvider } from "../runs/clusters-under-test.ts";
import type { AdaptiveState, RunRecord } from "../runs/run-record.ts";

/** What an adaptive run's design needs to know of the cluster sources: whether and how many clusters they may move. */
export interface ClusterSourceTraits {
  moves: boolean;
  /** The most clusters that may be moved one run may hold at once (ClusterProvider.movableAtOnce). */
  atOnce?: number;
}

/** The traits of a provider's sources; undefined without one. */
export function clusterSourceTraits(provider: ClusterProvider | undefined): ClusterSourceTraits | undefined {
  if (!provider) return undefined;
  const atOnce = provider.movableAtOnce?.();
  return { moves: provider.movesClusters?.() ?? false, ...(atOnce !== undefined ? { atOnce } : {}) };
}

/**
 * Whether an adaptive run can go in batches here, how, and why not: its decision step compares the
 * arms on the same clusters, so it needs clusters under test from a cluster source (`source`,
 * undefined when none is configured). With both arms on one payload they share the clusters
 * (shared clusters); when the payloads differ each cluster starts on the baseline payload and is
 * moved to the PR payload between batches (crossover by upgrade), which needs a source that may
 * move its clusters (Hive, or static clusters with upgrade: true) and a PR payload no older than the
 * baseline's (a cluster is never rolled back). Runs that cannot, upgrade runs
 * and runs without a baseline arm run their budget as a fixed run. `fixed` says so for the report,
 * `why` is the reason alone.
 */
export function adaptiveDesign(
  run: RunRecord,
  source: ClusterSourceTraits | undefined,
): { design: AdaptiveState["design"]; atOnce?: number } | { fixed: string; why: string } {
  const fixed = (why: string) => ({
    fixed: `mode: adaptive ran as a fixed run of ${run.options.iterations} iterations: ${why}`,
    why,
  });
  const arms = run.plan?.arms.map((a) => a.arm) ?? [];
  if (!arms.includes("baseline") || !arms.includes("pr"))
    return fixed("it needs a baseline arm to compare with (baseline: payload)");
  if (run.options.upgradeFrom) return fixed("upgrade runs move their clusters to another payload");
  if (!source) return fixed("it compares the arms cluster by cluster, and the bot has no cluster source");
  const pr = armPayload(run, "pr");
  const baseline = armPayload(run, "baseline");
  if (pr && baseline && samePayload(pr, baseline)) return { design: "shared clusters" };
  if (!pr || !baseline) return fixed("an arm names no payload, and its clusters run one");
  const names = run.payloads?.names;
  const rollback = names && releaseRollback(names.baseline, names.pr);
  if (rollback)
    return fixed(
      `a crossover by upgrade would move each cluster from the baseline payload to the PR payload: ${rollback}`,
    );
  if (!source.moves)
    return fixed(
      "the arms run different payloads, and a crossover by upgrade moves each cluster from the baseline payload to the PR payload: no cluster source may move its clusters (a Hive source, or static clusters with upgrade: true)",
    );
  if (source.atOnce !== undefined && source.atOnce < 2)
    return fixed(
      `a crossover by upgrade confirms what an upgrade may have done on a pair of new clusters held at once, and the cluster sources that may move clusters hold at most ${source.atOnce} at once (raise maxClusters)`,
    );
  return {
    design: "crossover by upgrade",
    ...(source.atOnce !== undefined ? { atOnce: source.atOnce } : {}),
  };
}
