import { z } from "zod";

/** The parts of Hive's objects (openshift/hive apis/hive/v1) the Hive source reads. */
export const hiveMetadataSchema = z.object({
  name: z.string(),
  deletionTimestamp: z.string().optional(),
  namespace: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});
const conditions = z
  .array(
    z.object({
      type: z.string(),
      status: z.string(),
      reason: z.string().optional(),
      message: z.string().optional(),
      lastTransitionTime: z.string().optional(),
    }),
  )
  .default([]);

const metadata = hiveMetadataSchema;

export const clusterImageSetSchema = z.object({ metadata, spec: z.object({ releaseImage: z.string() }) });

export const clusterPoolSchema = z.object({
  metadata,
  spec: z.object({
    platform: z.record(z.string(), z.unknown()),
    imageSetRef: z.object({ name: z.string() }),
    installConfigSecretTemplateRef: z.object({ name: z.string() }).optional(),
  }),
});

export const clusterClaimSchema = z.object({
  metadata,
  spec: z.object({
    clusterPoolName: z.string(),
    namespace: z.string().optional(),
    lifetime: z.string().optional(),
  }),
  status: z.object({ conditions, lifetime: z.string().optional() }).default({ conditions: [] }),
});

export const clusterDeploymentSchema = z.object({
  metadata,
  spec: z.object({
    installed: z.boolean().optional(),
    hibernateAfter: z.string().optional(),
    clusterMetadata: z.object({ adminKubeconfigSecretRef: z.object({ name: z.string() }) }).optional(),
  }),
  status: z.object({ conditions, powerState: z.string().optional() }).default({ conditions: [] }),
});
export type ClusterDeployment = z.infer<typeof clusterDeploymentSchema>;

/** The condition of that type when its status is "True" (or the status asked for). */
export function trueCondition(
  object: { status: { conditions: z.infer<typeof conditions> } },
  type: string,
  status: "True" | "False" = "True",
): z.infer<typeof conditions>[number] | undefined {
  return object.status.conditions.find((c) => c.type === type && c.status === status);
}
