import { lifecycleSchema, oteResultValueSchema } from "@netstress/core/model/ote-result-fields.ts";
import { oteTimestampPattern, type OteResult } from "./schemas.ts";

const lifecycles = new Set<unknown>(lifecycleSchema.options);
const resultValues = new Set<unknown>(oteResultValueSchema.options);
const isOptionalTimestamp = (value: unknown) =>
  value === undefined || (typeof value === "string" && oteTimestampPattern.test(value));

/**
 * True for a `run-test` result that `oteResultSchema` accepts as it is: every field valid and the
 * defaulted ones (`lifecycle`, `output`) present, as binaries print them. The runner checks one
 * per test while it keeps the next tests starting, and this costs a fraction of the schema's
 * time; anything it does not accept goes through the schema, which fills defaults and says what
 * is wrong. A property test holds the two to agreement.
 */
export function isCompleteOteResult(value: unknown): value is OteResult {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const r = value as Record<string, unknown>;
  return (
    typeof r.name === "string" &&
    r.name.length > 0 &&
    lifecycles.has(r.lifecycle) &&
    Number.isFinite(r.duration) &&
    (r.duration as number) >= 0 &&
    isOptionalTimestamp(r.startTime) &&
    isOptionalTimestamp(r.endTime) &&
    resultValues.has(r.result) &&
    typeof r.output === "string" &&
    (r.error === undefined || typeof r.error === "string")
  );
}
