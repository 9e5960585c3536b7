import { logChoose } from "./log-factorial.ts";
import { logSumExp } from "./log-sum-exp.ts";

/**
 * A 2×2 table. For a regression test the rows are the arms and the columns the outcomes:
 * a = PR failed, b = PR passed, c = baseline failed, d = baseline passed.
 */
export interface TwoByTwo {
  a: number;
  b: number;
  c: number;
  d: number;
}

/**
 * One-sided Fisher exact test, alternative "greater": P(X ≥ a) where X is hypergeometric with the
 * table's margins — the same quantity as scipy.stats.fisher_exact(table, alternative="greater").
 * Every term is summed in log space, so tiny p-values keep their relative precision.
 */
export function fisherExactGreater({ a, b, c, d }: TwoByTwo): number {
  for (const cell of [a, b, c, d]) {
    if (!Number.isInteger(cell) || cell < 0)
      throw new RangeError(`table cells must be non-negative integers`);
  }
  const rowTotal = a + b;
  const columnTotal = a + c;
  const total = a + b + c + d;
  const upper = Math.min(rowTotal, columnTotal);
  const logDenominator = logChoose(total, rowTotal);
  const logTerms: number[] = [];
  for (let x = a; x <= upper; x++) {
    logTerms.push(logChoose(columnTotal, x) + logChoose(total - columnTotal, rowTotal - x) - logDenominator);
  }
  return Math.min(1, Math.exp(logSumExp(logTerms)));
}

/**
 * The smallest p-value the "greater" test can give for tables with these margins: all the
 * column's events in the first row. A test whose minimum exceeds the level can never be significant,
 * so it does not belong in the multiple-testing family (Tarone 1990).
 */
export function fisherMinimumPValue({ a, b, c, d }: TwoByTwo): number {
  const rowTotal = a + b;
  const columnTotal = a + c;
  const extreme = Math.min(rowTotal, columnTotal);
  const otherRowExtreme = columnTotal - extreme;
  return fisherExactGreater({
    a: extreme,
    b: rowTotal - extreme,
    c: otherRowExtreme,
    d: c + d - otherRowExtreme,
  });
}
