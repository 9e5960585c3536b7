import { readFile, writeFile } from "node:fs/promises";
import type { Redis } from "ioredis";
import { parse as parseYaml, parseAllDocuments } from "yaml";
import pino from "pino";
import { createClusterLeases } from "../../src/clusters/cluster-leases.ts";
import { createClusterProvider } from "../../src/clusters/create-cluster-provider.ts";
import type { ClusterTiming } from "../../src/clusters/cluster-source.ts";
import { clusterSourcesSchema } from "../../src/clusters/cluster-sources-config.ts";
import type {
  ClusterLease,
  ClusterProvider,
  ClusterRequest,
  RunClusterRequest,
} from "../../src/runs/clusters-under-test.ts";
import type { FakeHive } from "@netstress/testbed/sim/start-fake-hive.ts";

export const RELEASED = `quay.io/openshift-release-dev/ocp-release@sha256:${"a".repeat(64)}`;
export const PR = `registry.example/netstress/pr-payload@sha256:${"b".repeat(64)}`;
export const NAMESPACE = "netstress-clusters";
/** The runner image of the build farm writeHiveFarmConfig configures: what its pods' images are keyed by. */
export const FARM_RUNNER_IMAGE = `registry.test/netstress/runner@sha256:${"c".repeat(64)}`;

const installConfig = (arch: string) =>
  [
    "apiVersion: v1",
    "metadata: { name: template }",
    "baseDomain: template.example",
    `controlPlane: { name: master, replicas: 3, architecture: ${arch} }`,
    `compute: [{ name: worker, replicas: 3, architecture: ${arch} }]`,
    "platform: { aws: { region: template-region } }",
    "pullSecret: ''",
    "",
  ].join("\n");

const secret = (name: string, data: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace: NAMESPACE },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")])),
});

/** How the source creates deployments on the seeded hub: its secrets, for `arches`. */
const deploymentTemplate = (arches: readonly string[]) => ({
  baseDomain: "ci.example",
  region: "us-east-1",
  credentialsSecret: "aws-creds",
  pullSecret: "pull-secret",
  installConfigSecret: "install-config-template",
  arches,
});

/** A hub as an operator sets it up: a pool of the released payload on amd64, and a deployment template. */
export function seedHub(
  hive: FakeHive,
  options: {
    poolSize?: number;
    hibernateAfter?: string;
    claimLifetime?: { maximum?: string };
    /** The pool's release image (default RELEASED). */
    releaseImage?: string;
  } = {},
): void {
  const store = hive.hub.store;
  store.create("secrets", secret("pool-template", { "install-config.yaml": installConfig("amd64") }));
  store.create(
    "secrets",
    secret("install-config-template", { "install-config.yaml": installConfig("amd64") }),
  );
  store.create("secrets", secret("aws-creds", { aws_access_key_id: "x", aws_secret_access_key: "y" }));
  store.create("secrets", secret("pull-secret", { ".dockerconfigjson": "{}" }));
  store.create("clusterimagesets", {
    apiVersion: "hive.openshift.io/v1",
    kind: "ClusterImageSet",
    metadata: { name: "released", namespace: "" },
    spec: { releaseImage: options.releaseImage ?? RELEASED },
  });
  store.create("clusterpools", {
    apiVersion: "hive.openshift.io/v1",
    kind: "ClusterPool",
    metadata: { name: "released-amd64", namespace: NAMESPACE },
    spec: {
      platform: { aws: { region: "us-east-1", credentialsSecretRef: { name: "aws-creds" } } },
      size: options.poolSize ?? 2,
      baseDomain: "pool.example",
      imageSetRef: { name: "released" },
      pullSecretRef: { name: "pull-secret" },
      installConfigSecretTemplateRef: { name: "pool-template" },
      ...(options.hibernateAfter ? { hibernateAfter: options.hibernateAfter } : {}),
      ...(options.claimLifetime ? { claimLifetime: options.claimLifetime } : {}),
    },
  });
}

const HUB_RBAC = new URL("../../deploy/hub/", import.meta.url);

/**
 * The hub RBAC the project ships (deploy/hub, as kustomize renders it for the NAMESPACE) applied
 * to the simulated hub; answers the path of a kubeconfig of its ServiceAccount, whose requests the
 * hub then authorizes by those rules alone (and by what Hive grants a claim's subjects).
 */
export async function leastPrivilegeHub(hive: FakeHive): Promise<{ kubeconfig: string; rules: string[] }> {
  const kustomization = parseYaml(await readFile(new URL("kustomization.yaml", HUB_RBAC), "utf8")) as {
    resources: string[];
  };
  let account = "";
  const rules: string[] = [];
  for (const file of kustomization.resources) {
    for (const document of parseAllDocuments(await readFile(new URL(file, HUB_RBAC), "utf8"))) {
      const object = document.toJS() as {
        kind: string;
        metadata: { name: string; namespace?: string };
        subjects?: { kind: string; namespace?: string }[];
        rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
      };
      const resource = `${object.kind.toLowerCase()}s`;
      const namespace = ["ClusterRole", "ClusterRoleBinding"].includes(object.kind) ? "" : NAMESPACE;
      for (const subject of object.subjects ?? [])
        if (subject.kind === "ServiceAccount") subject.namespace = NAMESPACE;
      if (object.kind === "ServiceAccount") account = object.metadata.name;
      for (const rule of object.rules ?? [])
        for (const group of rule.apiGroups)
          for (const kind of rule.resources)
            for (const verb of rule.verbs)
              rules.push(`${verb} ${group}/${kind} ${namespace ? "namespace" : "cluster"}`);
      hive.hub.store.create(resource, { ...object, metadata: { ...object.metadata, namespace } });
    }
  }
  return { kubeconfig: await hive.hub.serviceAccountKubeconfig(NAMESPACE, account), rules: rules.sort() };
}

export function hiveProvider(options: {
  hubKubeconfig: string;
  redis: Redis;
  prefix: string;
  maxClusters?: number;
  readySeconds?: number;
  attempts?: number;
  onCall?: (api: string, call: string) => void;
  timeoutMs?: number;
  timing?: Partial<ClusterTiming>;
  /** Fields of the source's configuration to change (platform, deployment …). */
  source?: Record<string, unknown>;
}) {
  const sources = clusterSourcesSchema.parse([
    {
      type: "hive",
      name: "hive",
      hub: { kubeconfig: options.hubKubeconfig },
      namespace: NAMESPACE,
      platform: "aws",
      maxClusters: options.maxClusters ?? 20,
      readySeconds: options.readySeconds ?? 30,
      attempts: options.attempts ?? 2,
      deployment: deploymentTemplate(["amd64", "arm64"]),
      ...options.source,
    },
  ]);
  return createClusterProvider({
    sources: () => sources,
    leases: createClusterLeases({ redis: options.redis, prefix: options.prefix, leaseMs: 30_000 }),
    prefix: options.prefix,
    logger: pino({ level: "silent" }),
    timing: options.timing ?? { pollMs: 50, healthPollMs: 100, lostAfterFailures: 2 },
    timeoutMs: options.timeoutMs ?? 5000,
    ...(options.onCall ? { onCall: options.onCall } : {}),
  });
}

export const request = (overrides: Partial<ClusterRequest> = {}): ClusterRequest => ({
  runId: "run-1",
  arm: "pr",
  arch: "arm64",
  payload: PR,
  count: 2,
  signal: new AbortController().signal,
  ...overrides,
});

/** One arm's request as the provider takes it: a run of that arm alone. */
export const runRequest = ({ arm, payload, upgradeTarget, ...rest }: ClusterRequest): RunClusterRequest => ({
  ...rest,
  arms: [{ arm, payload, ...(upgradeTarget ? { upgradeTarget } : {}) }],
});

/** The clusters of a run of one arm. */
export const acquireArm = async (provider: ClusterProvider, one: ClusterRequest): Promise<ClusterLease[]> =>
  (await provider.acquire(runRequest(one)))[one.arm] ?? [];

/** The bot's objects on the hub (what a leak would leave). */
export function botObjects(hive: FakeHive): string[] {
  const store = hive.hub.store;
  const mine = (o: { metadata: { labels?: Record<string, string> } }) =>
    o.metadata.labels?.["app.kubernetes.io/component"] === "cluster-under-test";
  return ["clusterclaims", "clusterdeployments", "clusterimagesets", "secrets"].flatMap((resource) =>
    store
      .list(resource, undefined, () => true)
      .items.filter(mine)
      .map((o) => `${resource}/${o.metadata.name}`),
  );
}

/**
 * Writes a bot's farm configuration: one amd64 build farm, and clusters under test from the hub's
 * Hive (the pool of the released payload, deployments from the template) — what a bot with
 * clusterSources reads.
 */
export async function writeHiveFarmConfig(options: {
  path: string;
  farmKubeconfig: string;
  hubKubeconfig: string;
  readySeconds: number;
  /** The hub's upgradeSeconds (its default when absent). */
  upgradeSeconds?: number;
  /** Sources tried before the hub's (static clusters). */
  before?: readonly object[];
  /** The hub's quota (default 8). */
  maxClusters?: number;
}): Promise<void> {
  await writeFile(
    options.path,
    JSON.stringify({
      runner: { image: FARM_RUNNER_IMAGE },
      clusters: [
        {
          name: "farm",
          kubeconfig: options.farmKubeconfig,
          namespace: "netstress",
          arches: ["amd64"],
          capacity: 4,
        },
      ],
      clusterSources: [
        ...(options.before ?? []),
        {
          type: "hive",
          name: "hive",
          hub: { kubeconfig: options.hubKubeconfig },
          namespace: NAMESPACE,
          platform: "aws",
          maxClusters: options.maxClusters ?? 8,
          readySeconds: options.readySeconds,
          ...(options.upgradeSeconds !== undefined ? { upgradeSeconds: options.upgradeSeconds } : {}),
          deployment: deploymentTemplate(["amd64"]),
        },
      ],
    }),
  );
}
