import type { ClusterLease, ClusterUnderTest } from "../runs/clusters-under-test.ts";
import type { KubeObjects } from "@netstress/core/kube/kube-objects.ts";
import { moveClusterTo } from "./move-cluster-to.ts";
import { watchClusterHealth } from "./watch-cluster-health.ts";

/**
 * A lease on a ready cluster: watched for loss from now on, given back once however often
 * release() is called (concurrent callers share the one give-back; a failed one is retried).
 */
export function createClusterLease(options: {
  cluster: ClusterUnderTest;
  /** The payload an upgrade run's [Upgrade] test moves the cluster to: moving there is not loss. */
  upgradeTarget?: string;
  objects: KubeObjects;
  health: { pollMs: number; failures: number };
  giveBack: () => Promise<void>;
  onLost?: (reason: string) => void;
  /**
   * Aborted when the lease itself is gone (ClusterLeaseLapsed) or the source saw the cluster taken
   * away (ClaimedClusterGone): the cluster is lost to the run, for that reason.
   */
  lapsed?: AbortSignal;
  /** See ClusterLease.expiresAt. */
  expiresAt?: number;
  /**
   * Its source may move it to another payload (ClusterLease.upgrade) in `timeoutMs`, its
   * ClusterVersion read every `pollMs` meanwhile.
   */
  movable?: { pollMs: number; timeoutMs: number };
}): ClusterLease {
  const lost = new AbortController();
  const onLapsed = () => {
    const reason = options.lapsed!.reason as Error;
    options.onLost?.(reason.message);
    lost.abort(reason);
  };
  if (options.lapsed?.aborted) onLapsed();
  else options.lapsed?.addEventListener("abort", onLapsed, { once: true });
  const stop = watchClusterHealth({
    objects: options.objects,
    payloads: [options.cluster.payload, ...(options.upgradeTarget ? [options.upgradeTarget] : [])],
    ...options.health,
    onLost: (reason) => {
      options.onLost?.(reason);
      lost.abort(new Error(`cluster ${options.cluster.id} lost: ${reason}`));
    },
  });
  let released: Promise<void> | undefined;
  const movable = options.movable;
  return {
    cluster: options.cluster,
    ...(movable
      ? {
          upgrade: (payload: string, signal: AbortSignal) =>
            moveClusterTo({ objects: options.objects, payload, ...movable, signal }),
        }
      : {}),
    lost: lost.signal,
    ...(options.expiresAt === undefined ? {} : { expiresAt: options.expiresAt }),
    release() {
      stop();
      options.lapsed?.removeEventListener("abort", onLapsed);
      // A give-back that failed (the hub did not answer) is tried again by the next call.
      released ??= options.giveBack().catch((error: unknown) => {
        released = undefined;
        throw error;
      });
      return released;
    },
  };
}
