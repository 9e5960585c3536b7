/** `[Invariant]` monitors watch their whole iteration: an adaptive run runs them in every batch and never decides them. */
export function isMonitor(name: string): boolean {
  return name.includes("[Invariant]");
}
