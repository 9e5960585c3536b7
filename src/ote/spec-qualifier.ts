import { compileCel } from "./compile-cel.ts";
import type { OteSpec } from "./schemas.ts";

/** The variables openshift-tests-extension gives suite qualifiers: the spec's own fields. */
const SPEC_VARIABLES = {
  name: "string",
  originalName: "string",
  source: "string",
  labels: "list<string>",
  codeLocations: "list<string>",
  tags: "map<string, string>",
};

/** A suite qualifier (CEL over a test spec) as a predicate on specs. */
export function compileSpecQualifier(expression: string): (spec: OteSpec) => boolean {
  const evaluate = compileCel({ expression, variables: SPEC_VARIABLES });
  return (spec) =>
    evaluate({
      name: spec.name,
      originalName: spec.originalName ?? "",
      source: spec.source,
      labels: spec.labels,
      codeLocations: spec.codeLocations,
      tags: spec.tags,
    });
}
