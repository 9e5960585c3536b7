import type { BinaryDescription } from "./describe-binary.ts";

/**
 * Whether two builds of a component's test binary come from one source: both name the same commit
 * and were built from a clean tree. A dirty tree is whatever was in the work tree at the time, so
 * its commit says nothing about the tests it carries.
 */
export function rebuiltFromSameSource(a: BinaryDescription, b: BinaryDescription): boolean {
  if (!a.source || !b.source) return false;
  return (
    a.source.commit !== "" &&
    a.source.commit === b.source.commit &&
    a.source.gitTreeState === "clean" &&
    b.source.gitTreeState === "clean"
  );
}
