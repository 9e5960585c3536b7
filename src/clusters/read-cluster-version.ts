import { ClustersUnavailableError } from "../runs/clusters-unavailable-error.ts";
import { clusterVersionSchema, clusterVersionState, type ClusterVersionState } from "./cluster-version.ts";
import type { KubeObjects } from "@netstress/core/kube/kube-objects.ts";

/** What a cluster says it runs (its ClusterVersion `version`): never assumed from configuration. */
export async function readClusterVersion(objects: KubeObjects): Promise<ClusterVersionState> {
  const found = await objects.get("clusterVersions", "version");
  if (found === undefined) {
    throw new ClustersUnavailableError(
      `${objects.name} has no ClusterVersion "version" (config.openshift.io/v1): is it an OpenShift cluster?`,
    );
  }
  const parsed = clusterVersionSchema.safeParse(found);
  if (!parsed.success) {
    throw new ClustersUnavailableError(
      `${objects.name}: its ClusterVersion cannot be read: ${parsed.error.message}`,
    );
  }
  return clusterVersionState(parsed.data);
}
