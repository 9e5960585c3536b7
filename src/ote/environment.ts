import { z } from "zod";

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
  optionalCapabilities: z.array(z.string().min(1)).optional(),
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
