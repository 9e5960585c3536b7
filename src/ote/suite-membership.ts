import type { OteInfo, OteSpec } from "./schemas.ts";
import { compileSpecQualifier } from "./spec-qualifier.ts";

export type OteSuite = OteInfo["suites"][number];

/**
 * Which specs belong to a suite, as openshift-tests composes suites across binaries: every binary's
 * definition of the suite counts, and so does every suite naming it as a parent (transitively);
 * their qualifiers are OR'd, and a definition without qualifiers takes every test. A qualifier
 * that fails on a spec (a tag the spec lacks, say) does not select it, where the binaries' own
 * filter would refuse the whole listing. Undefined when no binary advertises the suite.
 */
export function suiteMembership(options: {
  suite: string;
  suites: readonly OteSuite[];
}): ((spec: OteSpec) => boolean) | undefined {
  const members = new Set([options.suite]);
  for (let grown = true; grown;) {
    grown = false;
    for (const s of options.suites) {
      if (!members.has(s.name) && (s.parents ?? []).some((p) => members.has(p))) {
        members.add(s.name);
        grown = true;
      }
    }
  }
  const definitions = options.suites.filter((s) => members.has(s.name));
  if (definitions.length === 0) return undefined;
  if (definitions.some((s) => (s.qualifiers ?? []).length === 0)) return () => true;
  const qualifiers = [...new Set(definitions.flatMap((s) => s.qualifiers ?? []))].map(compileSpecQualifier);
  const selects = (qualifier: (spec: OteSpec) => boolean, spec: OteSpec) => {
    try {
      return qualifier(spec);
    } catch {
      return false;
    }
  };
  return (spec) => qualifiers.some((q) => selects(q, spec));
}
