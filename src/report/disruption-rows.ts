import type { DisruptionRow } from "../analysis/disruption-types.ts";

const ORDER = { regression: 0, inconclusive: 1, stable: 2 } as const;

/** Disruption rows most important first: regressions, then what is unclear, blocking before informing, longest PR disruption first. */
export function sortDisruptionRows(rows: readonly DisruptionRow[]): DisruptionRow[] {
  return [...rows].sort(
    (a, b) =>
      ORDER[a.verdict] - ORDER[b.verdict] ||
      Number(a.lifecycle !== "blocking") - Number(b.lifecycle !== "blocking") ||
      (b.pr.mean ?? 0) - (a.pr.mean ?? 0),
  );
}
