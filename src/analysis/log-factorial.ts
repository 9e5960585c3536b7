/**
 * ln(n!) from a table that grows on demand. Summing Math.log(k) keeps the absolute error near
 * n·ε·ln(n!), small enough for hypergeometric and binomial probabilities to about 1e-11 relative at
 * the run counts this tool sees (thousands), and avoids a log-gamma approximation.
 */
const table: number[] = [0];

export function logFactorial(n: number): number {
  if (!Number.isInteger(n) || n < 0)
    throw new RangeError(`logFactorial needs a non-negative integer, got ${n}`);
  for (let k = table.length; k <= n; k++) table.push(table[k - 1]! + Math.log(k));
  return table[n]!;
}

/** ln C(n, k); -Infinity when k is outside 0..n. */
export function logChoose(n: number, k: number): number {
  if (k < 0 || k > n) return Number.NEGATIVE_INFINITY;
  return logFactorial(n) - logFactorial(k) - logFactorial(n - k);
}
