import { z } from "zod";
import { readCsvRecord } from "./read-csv-record.ts";

/**
 * `--optional-capability` is a pflag StringSlice: the binary splits each value at commas (CSV), so
 * "Build,Console" is two capabilities to it, and must be to the selectors netstress evaluates.
 * (`--api-group` and `--feature-gate` are StringArrays, never split.)
 */
const capabilityListSchema = z.array(z.string().min(1)).transform((values, context) => {
  try {
    return values.flatMap((value) => readCsvRecord(value)).filter((value) => value !== "");
  } catch (error) {
    context.addIssue({ code: "custom", message: `optional-capability: ${(error as Error).message}` });
    return z.NEVER;
  }
});

/**
 * What openshift-tests-extension binaries know about the cluster under test: the values of their
 * environment flags (`list --platform … --network …`), which `environmentSelector` expressions read.
 * Every field is optional; an empty environment selects every test, as the binaries do.
 */
export const oteEnvironmentSchema = z.strictObject({
  platform: z.string().min(1).optional(),
  network: z.string().min(1).optional(),
  networkStack: z.string().min(1).optional(),
  architecture: z.string().min(1).optional(),
  topology: z.string().min(1).optional(),
  upgrade: z.string().min(1).optional(),
  version: z.string().min(1).optional(),
  externalConnectivity: z.string().min(1).optional(),
  optionalCapabilities: capabilityListSchema.optional(),
  facts: z.record(z.string().min(1), z.string()).optional(),
  apiGroups: z.array(z.string().min(1)).optional(),
  featureGates: z.array(z.string().min(1)).optional(),
});
export type OteEnvironment = z.infer<typeof oteEnvironmentSchema>;

/** True when no field is set: binaries then list every test and selectors are not evaluated. */
export function isEmptyEnvironment(environment: OteEnvironment): boolean {
  return Object.values(environment).every(
    (value) =>
      value === undefined ||
      (Array.isArray(value) && value.length === 0) ||
      (typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 0),
  );
}
