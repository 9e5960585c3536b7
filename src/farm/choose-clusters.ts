import { roundRobinClusters } from "../runner/execution-cluster.ts";
import type { Arm } from "@netstress/core/model/result-record.ts";
import type { ClusterLease } from "../runs/clusters-under-test.ts";

/**
 * One cluster per arm for this attempt: round-robin by iteration over the arm's clusters, passing
 * over lost ones (a lost cluster's iterations rerun on another) and those whose life ends within
 * `needMs`; throws, saying why, when an arm has none left.
 */
export function chooseClusters(
  byArm: Partial<Record<Arm, ClusterLease[]>>,
  arms: readonly Arm[],
  iteration: number,
  needMs: number,
): ClusterLease[] {
  const leases = new Map(Object.values(byArm).flatMap((list) => list.map((l) => [l.cluster.id, l] as const)));
  const choose = roundRobinClusters(
    Object.fromEntries(
      Object.entries(byArm).map(([arm, list]) => [
        arm,
        list.map((l) => ({
          id: l.cluster.id,
          payload: l.cluster.payload,
          kubeconfig: "",
          lost: l.lost,
          ...(l.expiresAt === undefined ? {} : { expiresAt: l.expiresAt }),
        })),
      ]),
    ),
    needMs,
  );
  return arms.map((arm) => leases.get(choose({ arm, iteration }).id)!);
}
