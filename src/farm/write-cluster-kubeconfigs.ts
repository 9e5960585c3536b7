import { chown, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ExecutionCluster } from "../runner/execution-cluster.ts";
import type { Arm } from "@netstress/core/model/result-record.ts";
import type { ClusterLease } from "../runs/clusters-under-test.ts";

/**
 * Writes each leased cluster's kubeconfig into `dir` (mode 0600, owned by the user the binaries
 * run as) and returns the clusters as the runner sees them: the test processes get KUBECONFIG
 * pointing at the file, never the kubeconfig's text. The caller removes `dir` when the shard ends.
 */
export async function writeClusterKubeconfigs(input: {
  leases: Partial<Record<Arm, ClusterLease[]>>;
  dir: string;
  owner?: { uid: number; gid: number };
}): Promise<Partial<Record<Arm, ExecutionCluster[]>>> {
  await mkdir(input.dir, { recursive: true, mode: 0o700 });
  if (input.owner) await chown(input.dir, input.owner.uid, input.owner.gid);
  let n = 0;
  const byArm: Partial<Record<Arm, ExecutionCluster[]>> = {};
  for (const [arm, leases] of Object.entries(input.leases) as [Arm, ClusterLease[]][]) {
    byArm[arm] = await Promise.all(
      leases.map(async (lease) => {
        const path = join(input.dir, `${arm}-${n++}.kubeconfig`);
        await writeFile(path, await lease.cluster.kubeconfig(), { mode: 0o600, flag: "wx" });
        if (input.owner) await chown(path, input.owner.uid, input.owner.gid);
        return {
          id: lease.cluster.id,
          payload: lease.cluster.payload,
          kubeconfig: path,
          lost: lease.lost,
          ...(lease.expiresAt === undefined ? {} : { expiresAt: lease.expiresAt }),
        };
      }),
    );
  }
  return byArm;
}
