/**
 * Whether two release pullspecs name the same release: the same text, or the same digest (a
 * cluster reports its release by digest, perhaps from another repository than the one asked for).
 */
export function sameRelease(a: string, b: string): boolean {
  if (a === b) return true;
  const digest = (pullspec: string) => /@(sha256:[a-f0-9]{64})$/.exec(pullspec)?.[1];
  const left = digest(a);
  return left !== undefined && left === digest(b);
}
