import { CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { z } from "zod";
import type { Arch } from "@netstress/core/arch/arch.ts";
import type { OteEnvironment } from "@netstress/core/model/ote-environment.ts";
import { RunnerError } from "./runner-error.ts";

const infrastructureSchema = z.looseObject({
  status: z
    .looseObject({
      platform: z.string().optional(),
      platformStatus: z.looseObject({ type: z.string().optional() }).optional(),
      controlPlaneTopology: z.string().optional(),
    })
    .optional(),
});
const networkSchema = z.looseObject({
  status: z
    .looseObject({
      networkType: z.string().optional(),
      clusterNetwork: z.array(z.looseObject({ cidr: z.string() })).optional(),
    })
    .optional(),
});
const clusterVersionSchema = z.looseObject({
  status: z
    .looseObject({
      desired: z.looseObject({ version: z.string().optional() }).optional(),
      history: z
        .array(z.looseObject({ state: z.string().optional(), version: z.string().optional() }))
        .optional(),
      capabilities: z.looseObject({ enabledCapabilities: z.array(z.string()).optional() }).optional(),
    })
    .optional(),
});

/** Network types by the short names extension binaries compare against ("ovn", "sdn"). */
const NETWORK_NAMES: Record<string, string> = { OVNKubernetes: "ovn", OpenShiftSDN: "sdn" };

/**
 * The environment of the cluster under test, as openshift-tests discovers it: platform and
 * topology from Infrastructure, network type and IP stack from Network, "major.minor" version,
 * upgrade kind and enabled capabilities from ClusterVersion (`version`; the others are `cluster`). An object the
 * cluster does not serve leaves its fields unset; any other failure throws a RunnerError naming
 * the object.
 */
export async function readClusterEnvironment(options: {
  kubeconfig: string;
  arch: Arch;
  timeoutMs?: number;
}): Promise<OteEnvironment> {
  const config = new KubeConfig();
  try {
    config.loadFromFile(options.kubeconfig);
  } catch (cause) {
    throw new RunnerError(`cannot read the kubeconfig ${options.kubeconfig}: ${(cause as Error).message}`, {
      cause,
    });
  }
  const api = config.makeApiClient(CustomObjectsApi);
  // A cluster that does not serve the object (404: not OpenShift, or no such object) says nothing
  // about that part of the environment; any other failure stops the run, since tests would then
  // be chosen for an environment nobody knows.
  const read = async <T>(plural: string, name: string, schema: z.ZodType<T>): Promise<T | undefined> => {
    const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
    try {
      const object: unknown = await Promise.race([
        api.getClusterCustomObject({ group: "config.openshift.io", version: "v1", plural, name }),
        new Promise((_, reject) =>
          timeout.addEventListener("abort", () => reject(new Error("no answer in time")), { once: true }),
        ),
      ]);
      return schema.parse(object);
    } catch (cause) {
      const status = (cause as { code?: unknown }).code;
      if (status === 404) return undefined;
      throw new RunnerError(
        `cannot read ${plural}.config.openshift.io/${name} from the cluster under test (${config.getCurrentCluster()?.server ?? options.kubeconfig}): ` +
          `${typeof status === "number" ? `HTTP ${status}` : (cause as Error).message}; ` +
          "give the environment with flags instead and unset KUBECONFIG, or grant read access to it",
        { cause },
      );
    }
  };
  const [infrastructure, network, clusterVersion] = await Promise.all([
    read("infrastructures", "cluster", infrastructureSchema),
    read("networks", "cluster", networkSchema),
    // The one ClusterVersion is named "version", unlike the other config objects.
    read("clusterversions", "version", clusterVersionSchema),
  ]);

  const platform = infrastructure?.status?.platformStatus?.type ?? infrastructure?.status?.platform;
  const networkType = network?.status?.networkType;
  const cidrs = network?.status?.clusterNetwork?.map((n) => n.cidr) ?? [];
  const ipv6 = cidrs.filter((c) => c.includes(":")).length;
  const networkStack =
    cidrs.length === 0 ? undefined : ipv6 === 0 ? "ipv4" : ipv6 === cidrs.length ? "ipv6" : "dual";
  const version = majorMinor(clusterVersion?.status?.desired?.version);
  const completed = (clusterVersion?.status?.history ?? []).filter((h) => h.state === "Completed");
  const upgrade =
    completed.length < 2
      ? undefined
      : majorMinor(completed[0]?.version) === majorMinor(completed[1]?.version)
        ? "micro"
        : "minor";
  const capabilities = clusterVersion?.status?.capabilities?.enabledCapabilities;
  const topology = infrastructure?.status?.controlPlaneTopology;
  return {
    architecture: options.arch,
    ...(platform ? { platform: platform.toLowerCase() } : {}),
    ...(topology ? { topology } : {}),
    ...(networkType ? { network: NETWORK_NAMES[networkType] ?? networkType.toLowerCase() } : {}),
    ...(networkStack ? { networkStack } : {}),
    ...(version ? { version } : {}),
    ...(upgrade ? { upgrade } : {}),
    ...(capabilities ? { optionalCapabilities: capabilities } : {}),
  };
}

function majorMinor(version: string | undefined): string | undefined {
  const match = version ? /^(\d+)\.(\d+)/.exec(version) : null;
  return match ? `${match[1]}.${match[2]}` : undefined;
}
