import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import pino from "pino";
import type { Arch } from "@netstress/core/arch/arch.ts";
import { createClusterProvider } from "../clusters/create-cluster-provider.ts";
import { createKubeObjects } from "@netstress/core/kube/kube-objects.ts";
import { readClusterVersion } from "../clusters/read-cluster-version.ts";
import { samePayload } from "../registry/same-payload.ts";
import { CLUSTER_COMPONENT } from "../clusters/hive-source.ts";
import { createMemoryClusterLeases } from "../clusters/memory-cluster-leases.ts";
import { clusterSourcesSchema } from "../clusters/cluster-sources-config.ts";
import { LABELS } from "@netstress/core/kube/netstress-labels.ts";
import type { Registry } from "../registry/create-registry.ts";
import { readRelease } from "../payload/read-release.ts";
import type { PlanCluster } from "@netstress/core/model/execution-plan.ts";
import type { Arm } from "@netstress/core/model/result-record.ts";
import { ClustersUnavailableError } from "../runs/clusters-unavailable-error.ts";
import type { ClusterLease } from "../runs/clusters-under-test.ts";
import type { SimulatedRelease } from "@netstress/testbed/sim/simulated-release.ts";
import { startFakeHive } from "@netstress/testbed/sim/start-fake-hive.ts";

/** Where the sample images claim to live (packages/testbed/src/sample-payload): a pullspec by digest for ClusterVersion. */
const REPOSITORY = "quay.io/netstress-sample/release";
const NAMESPACE = "netstress-demo";
const SOURCE = "demo-hive";

export interface DemoClusters {
  hubKubeconfig: string;
  /** The payloads by arm, as the clusters name them (pullspecs by digest). */
  payloads: Record<Arm, string>;
  /**
   * `count` new clusters of the arm's payload (the baseline arm's from the hub's pool of the released
   * payload; the PR arm's to confirm a suspect on clusters never upgraded), each with the kubeconfig
   * file its iterations get as KUBECONFIG.
   */
  claim(count: number, arm?: Arm): Promise<PlanCluster[]>;
  /** Upgrades a claimed cluster to the PR payload (ClusterVersion, forced) and hands it back as the PR arm's. */
  upgrade(cluster: PlanCluster): Promise<PlanCluster>;
  /** Gives one cluster back once it is done with. */
  release(id: string): Promise<void>;
  /** Gives every cluster back, stops Hive; says what the bot left on the hub (nothing, if all went well). */
  giveBack(): Promise<{ released: number; left: string[] }>;
}

/** How long the demo waits for the hub to tear down the clusters it gave back. */
const TEARDOWN_MS = 10_000;

/** Room on the demo's hub for every cluster a run claims, even when all are kept (--keep-clusters). */
const MAX_CLUSTERS = 64;

/**
 * The demo's clusters under test from a simulated Hive hub on loopback, through the bot's own
 * Hive source (with in-memory leases: the demo has no Redis): claimed from a ClusterPool of the
 * released payload, then upgraded to the PR payload, as a crossover by upgrade runs them. Each
 * simulated cluster runs the component builds its payload's image-references name, read from the
 * payload here as a real install (or upgrade) would pull them.
 */
export async function startDemoClusters(options: {
  registry: Registry;
  arch: Arch;
  payloads: Record<Arm, string>;
  /** The pool's size: the most clusters one batch claims. */
  poolSize: number;
  dir: string;
  signal: AbortSignal;
  onProgress?: (text: string) => void;
}): Promise<DemoClusters> {
  const { arch } = options;
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
  const carried = (image: string) => {
    const release = releases.find((r) => r.pullspec === image);
    if (!release) throw new Error(`the demo's hub knows no release ${image}`);
    return release.carries;
  };
  const hive = await startFakeHive({
    installMs: 300,
    clusterFor: ({ releaseImage }) => ({
      ...carried(releaseImage),
      nodes: 2,
      upgradeMs: 300,
      resolveRelease: carried,
    }),
  });
  seedHub({ hive, arch, releasedImage: pullspec("baseline"), poolSize: options.poolSize });
  const sources = clusterSourcesSchema.parse([
    {
      type: "hive",
      name: SOURCE,
      hub: { kubeconfig: hive.hub.kubeconfigPath },
      namespace: NAMESPACE,
      platform: "aws",
      maxClusters: MAX_CLUSTERS,
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
  const leases = new Map<string, ClusterLease>();
  let claims = 0;
  const giveBack = async () => {
    const released = (await Promise.allSettled([...leases.values()].map((lease) => lease.release()))).filter(
      (r) => r.status === "fulfilled",
    ).length;
    const ofOurs = () =>
      ["clusterclaims", "clusterdeployments"].flatMap((resource) =>
        hive.hub.store
          .list(resource, undefined, () => true)
          .items.filter((o) => o.metadata.labels?.[LABELS.component] === CLUSTER_COMPONENT)
          .map((o) => `${resource}/${o.metadata.name}`),
      );
    // Hive's finalizers keep a deleted claim until its cluster is torn down: wait for that, a while.
    const deadline = Date.now() + TEARDOWN_MS;
    while (ofOurs().length > 0 && Date.now() < deadline) await delay(100);
    provider.stop();
    const left = ofOurs();
    await hive.stop();
    await rm(options.dir, { recursive: true, force: true });
    return { released, left };
  };
  try {
    await mkdir(options.dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    await giveBack();
    throw error;
  }
  return {
    hubKubeconfig: hive.hub.kubeconfigPath,
    payloads: { pr: pullspec("pr"), baseline: pullspec("baseline") },
    async claim(count, arm = "baseline") {
      const told = new Set<string>();
      // Each claim is a run of its own to the source: the clusters it holds already stay out of it.
      const got = await provider.acquire({
        runId: `demo-${++claims}`,
        arch,
        arms: [
          arm === "baseline"
            ? // The health watch accepts the PR payload too: these clusters are upgraded to it.
              { arm, payload: pullspec("baseline"), upgradeTarget: pullspec("pr") }
            : { arm, payload: pullspec("pr") },
        ],
        count,
        signal: options.signal,
        onProgress: (p) => {
          const text = `${p.ready}/${p.wanted} ${p.phase}${p.detail ? ` (${p.detail})` : ""}`;
          if (!told.has(text)) options.onProgress?.(text);
          told.add(text);
        },
      });
      return Promise.all(
        (got[arm] ?? []).map(async (lease): Promise<PlanCluster> => {
          leases.set(lease.cluster.id, lease);
          const kubeconfig = join(options.dir, `${lease.cluster.id.replace(/\//g, "_")}.kubeconfig`);
          await writeFile(kubeconfig, await lease.cluster.kubeconfig(), { mode: 0o600 });
          return { arm, id: lease.cluster.id, payload: lease.cluster.payload, kubeconfig };
        }),
      );
    },
    async upgrade(cluster) {
      const target = pullspec("pr");
      const objects = createKubeObjects({
        name: cluster.id,
        kubeconfig: { path: cluster.kubeconfig },
        timeoutMs: 10_000,
      });
      await objects.mergePatch("clusterVersions", "version", {
        spec: { desiredUpdate: { image: target, version: null, force: true } },
      });
      const deadline = Date.now() + 60_000;
      for (;;) {
        const state = await readClusterVersion(objects);
        if (state.settled && state.payload !== undefined && samePayload(state.payload, target))
          return { ...cluster, arm: "pr", payload: target };
        if (Date.now() >= deadline)
          throw new ClustersUnavailableError(
            `${cluster.id} did not complete its upgrade to ${target} in 60 s (${state.detail})`,
          );
        await delay(100, undefined, { signal: options.signal });
      }
    },
    async release(id) {
      await leases.get(id)?.release();
      leases.delete(id);
    },
    giveBack,
  };
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
