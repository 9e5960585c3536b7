/** `budget: <N> iterations`. */
export const BUDGET_PATTERN = /^([1-9]\d{0,3}) iterations?$/;

/** `budget: <N> iterations` of a valid configuration, as its N. */
export function parseBudget(text: string): number {
  return Number(BUDGET_PATTERN.exec(text)?.[1]);
}
