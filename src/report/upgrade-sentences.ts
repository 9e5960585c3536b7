import type { AdaptiveSummary } from "./adaptive-test-rows.ts";

/**
 * What a crossover's report says of its upgrades, as plain sentences: which clusters were moved to
 * the PR payload and what that took (their cluster-hours include it), and which were not, and why.
 * None for shared clusters.
 */
export function upgradeSentences(summary: AdaptiveSummary): string[] {
  if (summary.design !== "crossover by upgrade") return [];
  const upgrades = summary.upgrades ?? [];
  const done = upgrades.filter((u) => !u.failed);
  const minutes = done.reduce((sum, u) => sum + u.minutes, 0);
  return [
    "Each cluster ran the baseline payload, then was upgraded to the PR payload and ran the PR arm (its cluster-hours include the upgrade).",
    `Upgraded to the PR payload: ${done.length} cluster(s)${done.length > 0 ? ` in ${minutes.toFixed(1)} minutes in all — ${done.map((u) => u.id).join(", ")}` : ""}.`,
    ...upgrades.filter((u) => u.failed).map((u) => `${u.id} not upgraded: ${u.failed} (given back).`),
  ];
}
