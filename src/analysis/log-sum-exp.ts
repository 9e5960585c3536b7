/** ln(Σ exp(x)) without overflow or underflow; -Infinity for an empty list. */
export function logSumExp(logs: readonly number[]): number {
  let max = Number.NEGATIVE_INFINITY;
  for (const value of logs) if (value > max) max = value;
  if (max === Number.NEGATIVE_INFINITY) return max;
  let sum = 0;
  for (const value of logs) sum += Math.exp(value - max);
  return max + Math.log(sum);
}
