import { RE2JS } from "re2js";

/**
 * A repository's run_if_changed, compiled with RE2 (its JavaScript port): matching takes time
 * linear in the path, whatever the pattern (`^(a+)+$` against a long path took seconds with
 * JavaScript's backtracking engine and blocked a worker). RE2 has no backreferences or lookaround.
 */
export function compileChangedPathPattern(source: string): { matches(path: string): boolean } {
  const pattern = RE2JS.compile(source);
  return { matches: (path) => pattern.matcher(path).find() };
}
