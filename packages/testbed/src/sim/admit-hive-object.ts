import type { KubeObject } from "./object-store.ts";
import { StoreError } from "./store-error.ts";

/** The required fields of a ClusterDeployment's platform, by platform, as Hive's CRD schema has them. */
const PLATFORM_REQUIRED: Record<string, string[]> = {
  aws: ["region"],
  azure: ["credentialsSecretRef", "region"],
  gcp: ["region"],
  ibmcloud: ["credentialsSecretRef", "region"],
  nutanix: ["credentialsSecretRef", "prismCentral"],
  openstack: ["cloud", "credentialsSecretRef"],
  vsphere: ["certificatesSecretRef", "credentialsSecretRef"],
};

/**
 * The CRD schema's say on a new ClusterDeployment: its required spec fields and its platform's
 * required fields, refused (422 Invalid) with the API server's message; other objects pass.
 */
export function admitHiveObject(resource: string, object: KubeObject): void {
  if (resource !== "clusterdeployments") return;
  const spec = object.spec ?? {};
  const platform = (spec.platform ?? {}) as Record<string, Record<string, unknown> | undefined>;
  const missing = [
    ...["baseDomain", "clusterName", "platform"].filter((f) => spec[f] === undefined).map((f) => `spec.${f}`),
    ...Object.entries(platform).flatMap(([name, fields]) =>
      (PLATFORM_REQUIRED[name] ?? [])
        .filter((f) => fields?.[f] === undefined)
        .map((f) => `spec.platform.${name}.${f}`),
    ),
  ];
  if (missing.length > 0) {
    throw new StoreError(
      `ClusterDeployment.hive.openshift.io "${object.metadata.name}" is invalid: ${missing.map((f) => `${f}: Required value`).join(", ")}`,
      { code: "Invalid" },
    );
  }
}
