import { ARCHES } from "@netstress/core/arch/arch.ts";
import {
  harnessErrorSchema,
  lifecycleSchema,
  oteResultValueSchema,
} from "@netstress/core/model/ote-result-fields.ts";
import {
  aloneReasonSchema,
  armSchema,
  binarySourceSchema,
  CLUSTER_LABEL_PATTERN,
  type ResultRecord,
} from "@netstress/core/model/result-record.ts";

const oneOf = (values: readonly string[]) => {
  const set = new Set(values);
  return (value: unknown) => typeof value === "string" && set.has(value);
};
const isLifecycle = oneOf(lifecycleSchema.options);
const isResult = oneOf(oteResultValueSchema.options);
const isArm = oneOf(armSchema.options);
const isArch = oneOf(ARCHES);
const isSource = oneOf(binarySourceSchema.options);
const isHarnessError = oneOf(harnessErrorSchema.options);
// A run has a few clusters and hundreds of thousands of records: each label is checked once.
const goodLabels = new Set<string>();
const isClusterLabel = (value: unknown) => {
  if (typeof value !== "string") return false;
  if (goodLabels.has(value)) return true;
  if (!CLUSTER_LABEL_PATTERN.test(value)) return false;
  if (goodLabels.size < 10_000) goodLabels.add(value);
  return true;
};
const isPayload = (value: unknown) => typeof value === "string" && value.length > 0 && value.length <= 1000;
const isAloneReason = oneOf(aloneReasonSchema.options);
const isName = (value: unknown) => typeof value === "string" && value.length > 0;
const isCount = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;
const absentOr = (check: (value: unknown) => boolean) => (value: unknown) =>
  value === undefined || check(value);
const isOptionalString = absentOr((value) => typeof value === "string");
const isStrings = (value: unknown) => Array.isArray(value) && value.every((v) => typeof v === "string");
// A plain object, as JSON.parse makes them, without a "__proto__" key (the schema rebuilds those).
const isStringMap = (value: unknown) =>
  typeof value === "object" &&
  value !== null &&
  Object.getPrototypeOf(value) === Object.prototype &&
  !Object.hasOwn(value, "__proto__") &&
  Object.values(value).every((v) => typeof v === "string");

/**
 * True for a record that `resultRecordSchema` accepts as it is: every field valid and the
 * defaulted ones (`output`, `attempt`) present, as the runner writes them. Analysis reads
 * hundreds of thousands of lines, and this check costs a tenth of the schema's; anything it
 * does not accept goes through the schema, which fills defaults and says what is wrong. A
 * property test holds the two to agreement. Records carrying `disruption` or `harnessNotes` (a
 * few invariant tests per iteration) are always left to the schema.
 */
export function isCompleteResultRecord(value: unknown): value is ResultRecord {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const r = value as Record<string, unknown>;
  return (
    isName(r.name) &&
    isLifecycle(r.lifecycle) &&
    Number.isFinite(r.duration) &&
    (r.duration as number) >= 0 &&
    isOptionalString(r.startTime) &&
    isOptionalString(r.endTime) &&
    isResult(r.result) &&
    typeof r.output === "string" &&
    isOptionalString(r.error) &&
    isArm(r.arm) &&
    isArch(r.arch) &&
    isCount(r.iteration) &&
    isCount(r.attempt) &&
    isName(r.component) &&
    absentOr(isName)(r.originalName) &&
    absentOr(isStrings)(r.labels) &&
    absentOr(isStringMap)(r.tags) &&
    isOptionalString(r.specSource) &&
    absentOr(isStrings)(r.codeLocations) &&
    absentOr(isSource)(r.source) &&
    absentOr(isHarnessError)(r.harnessError) &&
    absentOr(isClusterLabel)(r.cluster) &&
    absentOr(isPayload)(r.payload) &&
    absentOr(isAloneReason)(r.ranAlone) &&
    r.disruption === undefined &&
    r.harnessNotes === undefined
  );
}
