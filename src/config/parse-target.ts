/** `target: P0:P1`: a rise from P0 to P1 in a test's failure probability. */
export const TARGET_PATTERN = /^(0(?:\.\d+)?|1(?:\.0+)?):(0(?:\.\d+)?|1(?:\.0+)?)$/;

/** The target of a repository that names none, and of runs without a repository (gates): 2% → 10%. */
export const DEFAULT_TARGET = "0.02:0.10";

/** `target: P0:P1` of a valid configuration, as the rise from `from` to `to` it names. */
export function parseTarget(text: string): { from: number; to: number } {
  const [, from, to] = TARGET_PATTERN.exec(text) ?? [];
  return { from: Number(from), to: Number(to) };
}
