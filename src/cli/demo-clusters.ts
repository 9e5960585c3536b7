import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import pino from "pino";
import type { Arch } from "../arch/arch.ts";
import { createClusterProvider } from "../clusters/create-cluster-provider.ts";
import { CLUSTER_COMPONENT } from "../clusters/hive-source.ts";
import { createMemoryClusterLeases } from "../clusters/memory-cluster-leases.ts";
import { clusterSourcesSchema } from "../farm/farm-config.ts";
import { LABELS } from "../farm/job-identity.ts";
import type { Registry } from "../registry/create-registry.ts";
import { readRelease } from "../payload/read-release.ts";
import type { PlanCluster } from "../runner/execution-plan.ts";
import type { Arm } from "../runner/result-record.ts";
import type { ClusterLease } from "../runs/clusters-under-test.ts";
import type { SimulatedRelease } from "../sim/simulated-release.ts";
import { startFakeHive } from "../sim/start-fake-hive.ts";

/** Where the sample images claim to live (examples/payload): a pullspec by digest for ClusterVersion. */
const REPOSITORY = "quay.io/netstress-sample/release";
const NAMESPACE = "netstress-demo";
const SOURCE = "demo-hive";

export interface DemoClusters {
  hubKubeconfig: string;
  /** Every arm's clusters, with the kubeconfig file the iterations get as KUBECONFIG. */
  clusters: PlanCluster[];
  /** Gives every cluster back, stops Hive; says what the bot left on the hub (nothing, if all went well). */
  giveBack(): Promise<{ released: number; left: string[] }>;
}

/**
 * The demo's clusters under test from a simulated Hive hub on loopback, through the bot's own
 * Hive source (with in-memory leases: the demo has no Redis): the baseline arm's from a
 * ClusterPool of the released payload (ClusterClaims), the PR arm's installed from the PR payload
 * (ClusterDeployments). Each simulated cluster runs the component builds its payload's
 * image-references name, read from the payload here as a real install would pull them.
 */
export async function startDemoClusters(options: {
  registry: Registry;
  arch: Arch;
  payloads: Record<Arm, string>;
  perArm: number;
  dir: string;
  signal: AbortSignal;
  onProgress?: (text: string) => void;
}): Promise<DemoClusters> {
  const { arch, perArm } = options;
  const releases = await Promise.all(
    (["pr", "baseline"] as const).map(async (arm) => {
      const release = await readRelease({
        registry: options.registry,
        reference: options.payloads[arm],
        arch,
      });
      const carries: SimulatedRelease = {
        version: release.references.name,
        components: Object.fromEntries(
          release.references.tags.map((t) => [
            t.tag,
            { image: t.pullspec, ...(t.commit ? { commit: t.commit } : {}) },
          ]),
        ),
      };
      return { arm, pullspec: `${REPOSITORY}@${release.identity.digest}`, carries };
    }),
  );
  const pullspec = (arm: Arm) => releases.find((r) => r.arm === arm)!.pullspec;
  const hive = await startFakeHive({
    installMs: 300,
    clusterFor: ({ releaseImage }) => {
      const release = releases.find((r) => r.pullspec === releaseImage);
      return release ? { ...release.carries, nodes: 2 } : {};
    },
  });
  seedHub({ hive, arch, releasedImage: pullspec("baseline"), poolSize: perArm });
  const sources = clusterSourcesSchema.parse([
    {
      type: "hive",
      name: SOURCE,
      hub: { kubeconfig: hive.hub.kubeconfigPath },
      namespace: NAMESPACE,
      platform: "aws",
      maxClusters: 2 * perArm,
      claimLifetime: "1h",
      deleteAfter: "1h",
      readySeconds: 60,
      deployment: {
        baseDomain: "demo.netstress.example",
        region: "us-east-1",
        credentialsSecret: "aws-creds",
        pullSecret: "pull-secret",
        installConfigSecret: "install-config-template",
        arches: [arch],
      },
    },
  ]);
  const provider = createClusterProvider({
    sources: () => sources,
    leases: createMemoryClusterLeases({ leaseMs: 60_000 }),
    prefix: "demo",
    logger: pino({ level: "silent" }),
    timing: { pollMs: 100, healthPollMs: 5000, lostAfterFailures: 3 },
    timeoutMs: 10_000,
  });
  const leases: { arm: Arm; lease: ClusterLease }[] = [];
  const giveBack = async () => {
    const released = (await Promise.allSettled(leases.map((l) => l.lease.release()))).filter(
      (r) => r.status === "fulfilled",
    ).length;
    provider.stop();
    const left = ["clusterclaims", "clusterdeployments"].flatMap((resource) =>
      hive.hub.store
        .list(resource, undefined, () => true)
        .items.filter((o) => o.metadata.labels?.[LABELS.component] === CLUSTER_COMPONENT)
        .map((o) => `${resource}/${o.metadata.name}`),
    );
    await hive.stop();
    await rm(options.dir, { recursive: true, force: true });
    return { released, left };
  };
  try {
    const told = new Map<string, string>();
    const got = await provider.acquire({
      runId: "demo",
      arch,
      arms: (["pr", "baseline"] as const).map((arm) => ({ arm, payload: pullspec(arm) })),
      count: perArm,
      signal: options.signal,
      onProgress: (p) => {
        const text = `${p.arm} arm: ${p.ready}/${p.wanted} ${p.phase}${p.detail ? ` (${p.detail})` : ""}`;
        if (text !== told.get(p.arm)) options.onProgress?.(text);
        told.set(p.arm, text);
      },
    });
    for (const arm of ["pr", "baseline"] as const)
      leases.push(...(got[arm] ?? []).map((lease) => ({ arm, lease })));
    await mkdir(options.dir, { recursive: true, mode: 0o700 });
    const clusters = await Promise.all(
      leases.map(async ({ arm, lease }): Promise<PlanCluster> => {
        const kubeconfig = join(options.dir, `${lease.cluster.id.replace(/\//g, "_")}.kubeconfig`);
        await writeFile(kubeconfig, await lease.cluster.kubeconfig(), { mode: 0o600 });
        return { arm, id: lease.cluster.id, payload: lease.cluster.payload, kubeconfig };
      }),
    );
    clusters.sort((a, b) => a.arm.localeCompare(b.arm) * -1 || a.id.localeCompare(b.id));
    return { hubKubeconfig: hive.hub.kubeconfigPath, clusters, giveBack };
  } catch (error) {
    await giveBack();
    throw error;
  }
}

/** What an operator sets up on a Hive hub: a pool of the released payload, a deployment template. */
function seedHub(options: {
  hive: Awaited<ReturnType<typeof startFakeHive>>;
  arch: Arch;
  releasedImage: string;
  poolSize: number;
}): void {
  const store = options.hive.hub.store;
  const secret = (name: string, data: Record<string, string>) =>
    store.create("secrets", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace: NAMESPACE },
      data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")])),
    });
  const installConfig = [
    "apiVersion: v1",
    "metadata: { name: template }",
    "baseDomain: demo.netstress.example",
    `controlPlane: { name: master, replicas: 3, architecture: ${options.arch} }`,
    `compute: [{ name: worker, replicas: 2, architecture: ${options.arch} }]`,
    "platform: { aws: { region: us-east-1 } }",
    "pullSecret: ''",
    "",
  ].join("\n");
  secret("install-config-template", { "install-config.yaml": installConfig });
  secret("aws-creds", { aws_access_key_id: "demo", aws_secret_access_key: "demo" });
  secret("pull-secret", { ".dockerconfigjson": "{}" });
  store.create("clusterimagesets", {
    apiVersion: "hive.openshift.io/v1",
    kind: "ClusterImageSet",
    metadata: { name: "sample-released", namespace: "" },
    spec: { releaseImage: options.releasedImage },
  });
  store.create("clusterpools", {
    apiVersion: "hive.openshift.io/v1",
    kind: "ClusterPool",
    metadata: { name: `sample-released-${options.arch}`, namespace: NAMESPACE },
    spec: {
      platform: { aws: { region: "us-east-1", credentialsSecretRef: { name: "aws-creds" } } },
      size: options.poolSize,
      baseDomain: "demo.netstress.example",
      imageSetRef: { name: "sample-released" },
      pullSecretRef: { name: "pull-secret" },
      installConfigSecretTemplateRef: { name: "install-config-template" },
    },
  });
}
