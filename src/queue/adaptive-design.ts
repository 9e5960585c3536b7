import { samePayload } from "../registry/same-payload.ts";
import { armPayload } from "../runs/arm-payload.ts";
import type { RunRecord } from "../runs/run-record.ts";

/**
 * Whether an adaptive run can go in batches here, and why not: its decision step compares the
 * arms on the same clusters, so it needs clusters under test from a cluster source and both arms
 * on one payload (shared clusters). Runs whose payloads differ would need each cluster upgraded
 * from the baseline payload to the PR payload between batches (crossover), which the execute
 * stage does not do; they, and runs without a baseline arm, run their budget as a fixed run.
 * `fixed` says so for the report, `why` is the reason alone.
 */
export function adaptiveDesign(
  run: RunRecord,
  hasClusterSource: boolean,
): { design: "shared clusters" } | { fixed: string; why: string } {
  const fixed = (why: string) => ({
    fixed: `mode: adaptive ran as a fixed run of ${run.options.iterations} iterations: ${why}`,
    why,
  });
  const arms = run.plan?.arms.map((a) => a.arm) ?? [];
  if (!arms.includes("baseline") || !arms.includes("pr"))
    return fixed("it needs a baseline arm to compare with (baseline: payload)");
  if (run.options.upgradeFrom) return fixed("upgrade runs move their clusters to another payload");
  if (!hasClusterSource)
    return fixed("it compares the arms cluster by cluster, and the bot has no cluster source");
  const pr = armPayload(run, "pr");
  const baseline = armPayload(run, "baseline");
  if (!pr || !baseline || !samePayload(pr, baseline))
    return fixed(
      "the arms run different payloads, and batches on shared clusters need one payload (crossover by upgrade is not run by the bot)",
    );
  return { design: "shared clusters" };
}
