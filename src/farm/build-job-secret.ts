import type { V1Secret } from "@kubernetes/client-node";
import type { Arm } from "@netstress/core/model/result-record.ts";
import { LABELS } from "@netstress/core/kube/netstress-labels.ts";

/** The Secret of an iteration's Job: its name derives from the Job's. */
export function jobSecretName(jobName: string): string {
  return `${jobName}-secret`;
}

/** What marks an iteration's Secret (beside the Job's labels) as not a Job's pod. */
export const JOB_SECRET_COMPONENT = "iteration-secret";

/** The Secret's key holding the Job's record stream key (hex), mounted into the runner alone. */
export const STREAM_KEY_ITEM = "stream-key";

export interface JobSecretOptions {
  jobName: string;
  namespace: string;
  labels: Record<string, string>;
  /** See deriveStreamKey. */
  streamKey: Buffer;
  /** Per arm, the kubeconfig of the cluster under test the Job runs against (none: the configured one). */
  kubeconfigs?: Partial<Record<Arm, string>>;
  owner?: { name: string; uid: string };
}

/**
 * The Secret in the build-farm namespace of one iteration's Job: the key its runner signs the
 * record stream with (`stream-key`) and, against clusters under test, per arm (key `pr`,
 * `baseline`) the kubeconfig of the cluster the Job runs against: one arm's, as each arm of an
 * iteration against clusters under test runs in a pod of its own. It is created before its Job,
 * carries the Job's labels (the bot's) and, once the Job exists, the Job as owner, so that the
 * garbage collector deletes it with the Job however the Job goes (TTL, reconciliation, a lost bot).
 */
export function buildJobSecret(options: JobSecretOptions): V1Secret {
  const base64 = (text: string) => Buffer.from(text).toString("base64");
  return {
    apiVersion: "v1",
    kind: "Secret",
    type: "Opaque",
    metadata: {
      name: jobSecretName(options.jobName),
      namespace: options.namespace,
      labels: { ...options.labels, [LABELS.component]: JOB_SECRET_COMPONENT },
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
    data: {
      [STREAM_KEY_ITEM]: base64(options.streamKey.toString("hex")),
      ...Object.fromEntries(
        Object.entries(options.kubeconfigs ?? {}).map(([arm, text]) => [arm, base64(text)]),
      ),
    },
  };
}
