const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * Milliseconds of a Go duration string as time.ParseDuration reads it (`90s`, `1h30m`, `1.5h`,
 * `250ms`; a bare `0`), as specs write `resources.timeout`. Undefined when it is not one.
 */
export function parseGoDuration(text: string): number | undefined {
  if (text === "0") return 0;
  const parts = [...text.matchAll(/(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== text) return undefined;
  return parts.reduce((sum, [, n, unit]) => sum + Number(n) * UNIT_MS[unit!]!, 0);
}
