/** ψ(x) = d/dx ln Γ(x) for x > 0: recurrence up to x ≥ 12, then the asymptotic series. */
export function digamma(x: number): number {
  if (!(x > 0)) throw new RangeError(`digamma needs x > 0, got ${x}`);
  let shift = 0;
  while (x < 12) {
    shift -= 1 / x;
    x += 1;
  }
  const inverseSquare = 1 / (x * x);
  return (
    shift +
    Math.log(x) -
    0.5 / x -
    inverseSquare *
      (1 / 12 -
        inverseSquare *
          (1 / 120 - inverseSquare * (1 / 252 - inverseSquare * (1 / 240 - inverseSquare / 132))))
  );
}
