import { samePayload } from "../registry/same-payload.ts";
import { armPayload } from "../runs/arm-payload.ts";
import type { AdaptiveState, RunRecord } from "../runs/run-record.ts";

/**
 * Whether an adaptive run can go in batches here, how, and why not: its decision step compares the
 * arms on the same clusters, so it needs clusters under test from a cluster source (`source`,
 * undefined when none is configured). With both arms on one payload they share the clusters
 * (shared clusters); when the payloads differ each cluster starts on the baseline payload and is
 * moved to the PR payload between batches (crossover by upgrade), which needs a source that may
 * move its clusters (Hive, or static clusters with upgrade: true). Runs that cannot, upgrade runs
 * and runs without a baseline arm run their budget as a fixed run. `fixed` says so for the report,
 * `why` is the reason alone.
 */
export function adaptiveDesign(
  run: RunRecord,
  source: { moves: boolean } | undefined,
): { design: AdaptiveState["design"] } | { fixed: string; why: string } {
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
  if (!source.moves)
    return fixed(
      "the arms run different payloads, and a crossover by upgrade moves each cluster from the baseline payload to the PR payload: no cluster source may move its clusters (a Hive source, or static clusters with upgrade: true)",
    );
  return { design: "crossover by upgrade" };
}
