import type { OteSpec } from "../ote/schemas.ts";
import type { SpecFacts } from "@netstress/core/model/result-record.ts";

/**
 * What a record repeats from the spec its test was listed with: `originalName` (when it differs
 * from the name), labels, tags, the spec's source and code locations; empty ones are left out, as
 * records are written by the hundred thousand.
 */
export function specFacts(spec: OteSpec): SpecFacts {
  const facts: SpecFacts = {};
  if (spec.originalName && spec.originalName !== spec.name) facts.originalName = spec.originalName;
  if (spec.labels.length > 0) facts.labels = spec.labels;
  if (Object.keys(spec.tags).length > 0) facts.tags = spec.tags;
  if (spec.source) facts.specSource = spec.source;
  if (spec.codeLocations.length > 0) facts.codeLocations = spec.codeLocations;
  return facts;
}
