/** A rate as a whole percent, or with one decimal below 10% where the decimal matters. */
export function formatPercent(rate: number): string {
  return `${(rate * 100).toFixed(rate < 0.1 && rate > 0 ? 1 : 0)}%`;
}

/** A p- or q-value with two significant digits; exponent form when tiny. */
export function formatPValue(value: number): string {
  return value < 1e-4 ? value.toExponential(1) : value.toPrecision(2);
}
