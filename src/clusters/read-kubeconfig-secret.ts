import { z } from "zod";
import { ClustersUnavailableError } from "../runs/clusters-unavailable-error.ts";
import type { KubeObjects } from "@netstress/core/kube/kube-objects.ts";

const secretSchema = z.object({ data: z.record(z.string(), z.string()).default({}) });

/** The kubeconfig text a Secret holds under `key`; a missing Secret or key says which. */
export async function readKubeconfigSecret(options: {
  objects: KubeObjects;
  namespace: string;
  name: string;
  key: string;
}): Promise<string> {
  const { objects, namespace, name, key } = options;
  const found = await objects.get("secrets", name, namespace);
  if (found === undefined) {
    throw new ClustersUnavailableError(
      `the kubeconfig Secret ${namespace}/${name} on ${objects.name} is missing`,
    );
  }
  const encoded = secretSchema.parse(found).data[key];
  if (encoded === undefined) {
    throw new ClustersUnavailableError(
      `the Secret ${namespace}/${name} on ${objects.name} has no key "${key}" (it should hold a kubeconfig)`,
    );
  }
  return Buffer.from(encoded, "base64").toString("utf8");
}
