/** ψ′(x), the derivative of the digamma function, for x > 0: recurrence, then the asymptotic series. */
export function trigamma(x: number): number {
  if (!(x > 0)) throw new RangeError(`trigamma needs x > 0, got ${x}`);
  let shift = 0;
  while (x < 12) {
    shift += 1 / (x * x);
    x += 1;
  }
  const inverseSquare = 1 / (x * x);
  return (
    shift +
    1 / x +
    inverseSquare / 2 +
    (inverseSquare / x) * (1 / 6 - inverseSquare * (1 / 30 - inverseSquare * (1 / 42 - inverseSquare / 30)))
  );
}
