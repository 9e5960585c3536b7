import { basename, resolve } from "node:path";
import type { PlanCluster } from "@netstress/core/model/execution-plan.ts";
import type { Arm } from "@netstress/core/model/result-record.ts";
import { ClustersUnavailableError } from "../runs/clusters-unavailable-error.ts";
import { createKubeObjects } from "@netstress/core/kube/kube-objects.ts";
import { readClusterVersion } from "./read-cluster-version.ts";

/**
 * The clusters under test a person names by kubeconfig file (`netstress run --pr-cluster FILE
 * --baseline-cluster FILE`): each one's payload read from its ClusterVersion, as a static source
 * reads it, never assumed. A cluster that is upgrading, or says nothing of its payload, is refused
 * with the reason. Ids are `kubeconfig/<file name>` (made unique by a number when two files share a
 * name).
 */
export async function readKubeconfigClusters(input: {
  files: Partial<Record<Arm, readonly string[]>>;
  timeoutMs?: number;
}): Promise<PlanCluster[]> {
  const entries = (Object.entries(input.files) as [Arm, readonly string[]][]).flatMap(([arm, files]) =>
    files.map((file) => ({ arm, path: resolve(file) })),
  );
  const seen = new Map<string, Arm>();
  for (const { arm, path } of entries) {
    const other = seen.get(path);
    if (other !== undefined) {
      throw new ClustersUnavailableError(
        other === arm
          ? `${path} is given twice for the ${arm} arm`
          : `${path} is given for both arms: the PR arm's clusters are never the baseline's`,
      );
    }
    seen.set(path, arm);
  }
  const ids = new Set<string>();
  return Promise.all(
    entries.map(async ({ arm, path }) => {
      const name = basename(path)
        .replace(/[^A-Za-z0-9._:-]/g, "_")
        .replace(/^[^A-Za-z0-9]+/, "");
      const base = `kubeconfig/${name || "cluster"}`;
      let id = base;
      for (let n = 2; ids.has(id); n++) id = `${base}-${n}`;
      ids.add(id);
      const objects = createKubeObjects({
        name: path,
        kubeconfig: { path },
        timeoutMs: input.timeoutMs ?? 30_000,
      });
      const version = await readClusterVersion(objects);
      if (!version.payload)
        throw new ClustersUnavailableError(`${path}: its ClusterVersion names no payload`);
      if (!version.settled) {
        throw new ClustersUnavailableError(
          `${path} is not settled on ${version.payload}${version.detail ? ` (${version.detail})` : ""}: wait until its update completes`,
        );
      }
      return { arm, id, payload: version.payload, kubeconfig: path };
    }),
  );
}
