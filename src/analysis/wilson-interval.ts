/**
 * Wilson score interval for a proportion (95% by default): unlike the normal approximation it stays
 * inside [0, 1] and is honest at 0 or n successes, which is where flaky tests live.
 */
export function wilsonInterval({
  successes,
  trials,
  z = 1.959963984540054,
}: {
  successes: number;
  trials: number;
  z?: number;
}): { low: number; high: number } | null {
  if (trials <= 0) return null;
  const proportion = successes / trials;
  const z2 = z * z;
  const centre = (proportion + z2 / (2 * trials)) / (1 + z2 / trials);
  const halfWidth =
    (z * Math.sqrt((proportion * (1 - proportion)) / trials + z2 / (4 * trials * trials))) /
    (1 + z2 / trials);
  return { low: Math.max(0, centre - halfWidth), high: Math.min(1, centre + halfWidth) };
}
