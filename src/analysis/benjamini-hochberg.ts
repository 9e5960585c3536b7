/**
 * Benjamini–Hochberg adjusted p-values (q-values): q_(i) = min over j ≥ i of p_(j)·m/j, capped at 1,
 * returned in the input order. Rejecting every test with q ≤ α controls the false discovery rate
 * at α for independent or positively dependent tests.
 */
export function benjaminiHochberg(pValues: readonly number[]): number[] {
  const m = pValues.length;
  const order = pValues.map((_, index) => index).sort((x, y) => pValues[y]! - pValues[x]!);
  const adjusted = new Array<number>(m);
  let running = 1;
  order.forEach((index, position) => {
    const rank = m - position;
    running = Math.min(running, (pValues[index]! * m) / rank);
    adjusted[index] = running;
  });
  return adjusted;
}
