import { readFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { IN_CLUSTER } from "@netstress/core/kube/in-cluster.ts";
import { farmConfigSchema, type FarmConfig } from "./farm-config.ts";
import { FarmError } from "./farm-error.ts";

/**
 * Reads the farm configuration (YAML or JSON). Paths inside it (kubeconfigs, the test binary
 * registry) are relative to the file, so a mounted directory of configuration works as is.
 */
export async function loadFarmConfig(path: string): Promise<FarmConfig> {
  let value: unknown;
  try {
    value = parseYaml(await readFile(path, "utf8"));
  } catch (cause) {
    throw new FarmError("invalid-config", `farm config ${path}: ${(cause as Error).message.split("\n")[0]}`, {
      cause,
    });
  }
  const parsed = farmConfigSchema.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`);
    throw new FarmError("invalid-config", `farm config ${path}:\n${problems.join("\n")}`);
  }
  const base = dirname(resolve(path));
  const absolute = (p: string) => (isAbsolute(p) ? p : resolve(base, p));
  const kubeconfig = (p: string) => (p === IN_CLUSTER ? IN_CLUSTER : absolute(p));
  const config = parsed.data;
  return {
    ...config,
    clusters: config.clusters.map((c) => ({ ...c, kubeconfig: kubeconfig(c.kubeconfig) })),
    clusterSources: config.clusterSources.map((source) =>
      source.type === "hive"
        ? { ...source, hub: { ...source.hub, kubeconfig: kubeconfig(source.hub.kubeconfig) } }
        : {
            ...source,
            secretsFrom: kubeconfig(source.secretsFrom),
            clusters: source.clusters.map((c) =>
              c.kubeconfig === undefined ? c : { ...c, kubeconfig: absolute(c.kubeconfig) },
            ),
          },
    ),
    ...(config.testBinaries ? { testBinaries: absolute(config.testBinaries) } : {}),
  };
}
