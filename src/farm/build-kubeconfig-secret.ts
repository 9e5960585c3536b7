import type { V1Secret } from "@kubernetes/client-node";
import type { Arm } from "../runner/result-record.ts";
import { LABELS } from "./job-identity.ts";

/** The Secret of an iteration's Job: its name derives from the Job's. */
export function kubeconfigSecretName(jobName: string): string {
  return `${jobName}-kubeconfig`;
}

/** What marks an iteration's kubeconfig Secret (beside the Job's labels) as not a Job's pod. */
export const KUBECONFIG_SECRET_COMPONENT = "cluster-under-test-kubeconfig";

export interface KubeconfigSecretOptions {
  jobName: string;
  namespace: string;
  labels: Record<string, string>;
  kubeconfigs: Partial<Record<Arm, string>>;
  owner?: { name: string; uid: string };
}

/**
 * The Secret in the build-farm namespace holding, per arm (key `pr`, `baseline`), the kubeconfig of
 * the cluster under test an iteration's Job runs against: one arm's, as each arm of an iteration
 * against clusters under test runs in a pod of its own. It is created before its Job, carries the
 * Job's labels (the bot's) and, once the Job exists, the Job as owner, so that the garbage
 * collector deletes it with the Job however the Job goes (TTL, reconciliation, a lost bot).
 */
export function buildKubeconfigSecret(options: KubeconfigSecretOptions): V1Secret {
  return {
    apiVersion: "v1",
    kind: "Secret",
    type: "Opaque",
    metadata: {
      name: kubeconfigSecretName(options.jobName),
      namespace: options.namespace,
      labels: { ...options.labels, [LABELS.component]: KUBECONFIG_SECRET_COMPONENT },
      ...(options.owner
        ? {
            ownerReferences: [
              {
                apiVersion: "batch/v1",
                kind: "Job",
                name: options.owner.name,
                uid: options.owner.uid,
                blockOwnerDeletion: false,
              },
            ],
          }
        : {}),
    },
    data: Object.fromEntries(
      Object.entries(options.kubeconfigs).map(([arm, text]) => [arm, Buffer.from(text).toString("base64")]),
    ),
  };
}
