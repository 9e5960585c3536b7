import type { HistoryCounts } from "../analysis/types.ts";

/** A history baseline's test counts per test name (entries of one name, e.g. from two components, summed). */
export function historyByTest(
  tests: readonly { name: string; runs: number; passes: number }[],
): Map<string, HistoryCounts> {
  const byTest = new Map<string, HistoryCounts>();
  for (const test of tests) {
    const known = byTest.get(test.name);
    byTest.set(test.name, {
      runs: (known?.runs ?? 0) + test.runs,
      passes: (known?.passes ?? 0) + test.passes,
    });
  }
  return byTest;
}
