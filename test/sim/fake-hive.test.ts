import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from "@kubernetes/client-node";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeHive, type FakeHive } from "@netstress/testbed/sim/start-fake-hive.ts";

const run = promisify(execFile);
const KUBECTL = ["/usr/bin/kubectl", "/usr/local/bin/kubectl"].find((p) => existsSync(p));
const RELEASE = `quay.io/example/release@sha256:${"c".repeat(64)}`;
const OVN = { image: `quay.io/example/ovn@sha256:${"d".repeat(64)}`, commit: "d".repeat(40) };
const hive = { group: "hive.openshift.io", version: "v1" };

interface Conditioned {
  metadata: { name: string; namespace: string };
  spec: Record<string, unknown> & {
    namespace?: string;
    clusterMetadata?: { adminKubeconfigSecretRef: { name: string } };
    installed?: boolean;
  };
  status?: { conditions?: { type: string; status: string; reason?: string }[]; ready?: number };
}

let fake: FakeHive | undefined;
afterEach(async () => {
  await fake?.stop();
  fake = undefined;
});

function hubClients(h: FakeHive) {
  const config = new KubeConfig();
  config.loadFromFile(h.hub.kubeconfigPath);
  return { core: config.makeApiClient(CoreV1Api), custom: config.makeApiClient(CustomObjectsApi) };
}

const conditionOf = (o: Conditioned | undefined, type: string) =>
  o?.status?.conditions?.find((c) => c.type === type);

async function setUp(h: FakeHive, arch = "arm64") {
  const { core, custom } = hubClients(h);
  await custom.createClusterCustomObject({
    ...hive,
    plural: "clusterimagesets",
    body: {
      apiVersion: "hive.openshift.io/v1",
      kind: "ClusterImageSet",
      metadata: { name: "pr-payload" },
      spec: { releaseImage: RELEASE },
    },
  });
  const installConfig = `apiVersion: v1\ncontrolPlane:\n  architecture: ${arch}\ncompute:\n- name: worker\n  architecture: ${arch}\n`;
  await core.createNamespacedSecret({
    namespace: "netstress",
    body: {
      metadata: { name: "install-config" },
      stringData: undefined,
      data: { "install-config.yaml": Buffer.from(installConfig).toString("base64") },
    },
  });
  return { core, custom };
}

const deploymentBody = (name: string, annotations: Record<string, string> = {}) => ({
  apiVersion: "hive.openshift.io/v1",
  kind: "ClusterDeployment",
  metadata: { name, annotations },
  spec: {
    clusterName: name,
    baseDomain: "example.test",
    platform: { aws: { region: "us-east-1" } },
    provisioning: { imageSetRef: { name: "pr-payload" }, installConfigSecretRef: { name: "install-config" } },
  },
});

async function kubeconfigOf(h: FakeHive, namespace: string, name: string): Promise<KubeConfig> {
  const { core, custom } = hubClients(h);
  const cd = (await custom.getNamespacedCustomObject({
    ...hive,
    namespace,
    plural: "clusterdeployments",
    name,
  })) as Conditioned;
  const secret = await core.readNamespacedSecret({
    namespace,
    name: cd.spec.clusterMetadata!.adminKubeconfigSecretRef.name,
  });
  const config = new KubeConfig();
  config.loadFromString(Buffer.from(secret.data!.kubeconfig!, "base64").toString("utf8"));
  return config;
}

describe("the fake Hive", () => {
  it("installs a ClusterDeployment as a cluster of its image set's payload and arch, and deleting it stops the cluster", async () => {
    fake = await startFakeHive({
      installMs: 300,
      clusterFor: ({ releaseImage }) => {
        if (releaseImage !== RELEASE) throw new Error(`no such payload ${releaseImage}`);
        return { version: "4.20.0-0.pr", components: { "ovn-kubernetes": OVN } };
      },
    });
    const { custom } = await setUp(fake);
    await custom.createNamespacedCustomObject({
      ...hive,
      namespace: "netstress",
      plural: "clusterdeployments",
      body: deploymentBody("pr-1"),
    });
    const read = async () =>
      (await custom.getNamespacedCustomObject({
        ...hive,
        namespace: "netstress",
        plural: "clusterdeployments",
        name: "pr-1",
      })) as Conditioned;
    await expect
      .poll(async () => conditionOf(await read(), "Provisioned")?.reason, { timeout: 20_000 })
      .toBe("Provisioned");
    expect((await read()).spec.installed).toBe(true);
    expect(conditionOf(await read(), "Ready")?.status).toBe("True");

    const config = await kubeconfigOf(fake, "netstress", "pr-1");
    const core = config.makeApiClient(CoreV1Api);
    const nodes = (await core.listNode()).items;
    expect(new Set(nodes.map((n) => n.status?.nodeInfo?.architecture))).toEqual(new Set(["arm64"]));
    const cv = (await config.makeApiClient(CustomObjectsApi).getClusterCustomObject({
      group: "config.openshift.io",
      version: "v1",
      plural: "clusterversions",
      name: "version",
    })) as { status: { desired: { image: string; version: string } } };
    expect(cv.status.desired).toEqual({ image: RELEASE, version: "4.20.0-0.pr" });
    const ds = await config
      .makeApiClient(AppsV1Api)
      .readNamespacedDaemonSet({ namespace: "openshift-ovn-kubernetes", name: "ovnkube-node" });
    expect(ds.spec?.template.spec?.containers[0]?.image).toBe(OVN.image);
    expect(fake.clusterOf({ namespace: "netstress", name: "pr-1" })?.url).toBe(
      config.getCurrentCluster()?.server,
    );

    await custom.deleteNamespacedCustomObject({
      ...hive,
      namespace: "netstress",
      plural: "clusterdeployments",
      name: "pr-1",
    });
    await expect.poll(() => fake!.stats.clustersStopped, { timeout: 10_000 }).toBe(1);
    await expect(core.listNode()).rejects.toThrow(/ECONNREFUSED|connect/);
    expect(fake.stats.api.calls.get("POST clusterdeployments")).toBe(1);
  });

  it("keeps a pool's size, gives a claim a ready cluster, grows for a waiting claim up to maxSize, and frees the cluster when the claim goes", async () => {
    fake = await startFakeHive({ installMs: 200 });
    const { custom } = await setUp(fake, "amd64");
    await custom.createNamespacedCustomObject({
      ...hive,
      namespace: "netstress",
      plural: "clusterpools",
      body: {
        apiVersion: "hive.openshift.io/v1",
        kind: "ClusterPool",
        metadata: { name: "released" },
        spec: {
          size: 1,
          baseDomain: "example.test",
          imageSetRef: { name: "pr-payload" },
          platform: { aws: { region: "us-east-1" } },
          installConfigSecretTemplateRef: { name: "install-config" },
        },
      },
    });
    const pool = async () =>
      (await custom.getNamespacedCustomObject({
        ...hive,
        namespace: "netstress",
        plural: "clusterpools",
        name: "released",
      })) as Conditioned;
    await expect.poll(async () => (await pool()).status?.ready, { timeout: 20_000 }).toBe(1);

    const claim = (name: string) =>
      custom.createNamespacedCustomObject({
        ...hive,
        namespace: "netstress",
        plural: "clusterclaims",
        body: {
          apiVersion: "hive.openshift.io/v1",
          kind: "ClusterClaim",
          metadata: { name },
          spec: { clusterPoolName: "released" },
        },
      });
    const readClaim = async (name: string) =>
      (await custom.getNamespacedCustomObject({
        ...hive,
        namespace: "netstress",
        plural: "clusterclaims",
        name,
      })) as Conditioned;
    await claim("first");
    await expect
      .poll(async () => conditionOf(await readClaim("first"), "ClusterRunning")?.status, { timeout: 20_000 })
      .toBe("True");
    const namespace = (await readClaim("first")).spec.namespace!;
    expect(conditionOf(await readClaim("first"), "Pending")).toMatchObject({
      status: "False",
      reason: "ClusterClaimed",
    });
    const claimed = (await kubeconfigOf(fake, namespace, namespace)).makeApiClient(CoreV1Api);
    expect((await claimed.listNode()).items.length).toBeGreaterThan(0);

    // The pool replaces the claimed cluster; with size 0 and no room under maxSize a second claim
    // waits, and the pool grows for it once maxSize allows.
    await custom.patchNamespacedCustomObject(
      {
        ...hive,
        namespace: "netstress",
        plural: "clusterpools",
        name: "released",
        body: { spec: { size: 0, maxSize: 1 } },
      },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    await claim("second");
    await expect
      .poll(async () => conditionOf(await readClaim("second"), "Pending")?.reason, { timeout: 10_000 })
      .toBe("NoClusters");
    await expect
      .poll(async () => conditionOf(await readClaim("second"), "Pending")?.reason, { timeout: 2_000 })
      .toBe("NoClusters");
    await custom.patchNamespacedCustomObject(
      {
        ...hive,
        namespace: "netstress",
        plural: "clusterpools",
        name: "released",
        body: { spec: { maxSize: 2 } },
      },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    await expect
      .poll(async () => conditionOf(await readClaim("second"), "ClusterRunning")?.status, { timeout: 20_000 })
      .toBe("True");
    expect((await readClaim("second")).spec.namespace).not.toBe(namespace);

    await custom.deleteNamespacedCustomObject({
      ...hive,
      namespace: "netstress",
      plural: "clusterclaims",
      name: "first",
    });
    await expect
      .poll(
        () =>
          claimed.listNode().then(
            () => "reachable",
            () => "gone",
          ),
        { timeout: 10_000 },
      )
      .toBe("gone");
    const deployments = (await custom.listClusterCustomObject({ ...hive, plural: "clusterdeployments" })) as {
      items: Conditioned[];
    };
    expect(deployments.items.map((d) => d.metadata.namespace)).not.toContain(namespace);
  });

  it("leaves a never-ready install not ready, marks a failed one ProvisionFailed, and reports a lost cluster Unreachable", async () => {
    fake = await startFakeHive({
      installMs: 200,
      faults: {
        neverReady: (d) => d.name === "stuck",
        failInstall: (d) => d.name === "broken",
        lose: { select: (d) => d.name === "lost", afterMs: 300 },
      },
    });
    const { custom } = await setUp(fake);
    for (const name of ["stuck", "broken", "lost"]) {
      await custom.createNamespacedCustomObject({
        ...hive,
        namespace: "netstress",
        plural: "clusterdeployments",
        body: deploymentBody(name),
      });
    }
    const read = async (name: string) =>
      (await custom.getNamespacedCustomObject({
        ...hive,
        namespace: "netstress",
        plural: "clusterdeployments",
        name,
      })) as Conditioned;
    await expect
      .poll(async () => conditionOf(await read("broken"), "ProvisionFailed")?.status, { timeout: 20_000 })
      .toBe("True");
    expect(conditionOf(await read("broken"), "Provisioned")?.reason).toBe("ProvisionStopped");
    await expect
      .poll(async () => conditionOf(await read("lost"), "Unreachable")?.status, { timeout: 20_000 })
      .toBe("True");
    expect(conditionOf(await read("lost"), "Ready")?.status).toBe("False");
    // Many install times later, the stuck one is still provisioning and has no kubeconfig.
    const stuck = await read("stuck");
    expect(conditionOf(stuck, "Provisioned")).toMatchObject({ status: "False", reason: "Provisioning" });
    expect(stuck.spec.clusterMetadata).toBeUndefined();
    expect(fake.clusters()).toHaveLength(0);
    expect(fake.stats).toMatchObject({
      installsStarted: 3,
      installsFailed: 1,
      clustersStarted: 1,
      clustersStopped: 1,
    });
  });

  it("honours delete-after and a claim's lifetime (scaled), and kubectl lists what it did", async () => {
    // One Hive hour lasts two seconds.
    fake = await startFakeHive({ installMs: 100, timeScale: 2000 / 3_600_000 });
    const { custom } = await setUp(fake);
    await custom.createNamespacedCustomObject({
      ...hive,
      namespace: "netstress",
      plural: "clusterdeployments",
      // Six seconds: kubectl, below, must list the cluster before it goes, even on a loaded machine.
      body: deploymentBody("short-lived", { "hive.openshift.io/delete-after": "3h" }),
    });
    await expect.poll(() => fake!.stats.clustersStarted, { timeout: 20_000 }).toBe(1);
    if (KUBECTL) {
      const { stdout } = await run(
        KUBECTL,
        ["--kubeconfig", fake.hub.kubeconfigPath, "get", "clusterdeployments", "-A"],
        { encoding: "utf8" },
      );
      expect(stdout).toMatch(
        /netstress\s+short-lived\s+short-lived-\w+\s+aws\s+us-east-1\s+4\.20\.0\s+Provisioned\s+Running/,
      );
    }
    await expect
      .poll(
        async () =>
          (
            (await custom.listClusterCustomObject({ ...hive, plural: "clusterdeployments" })) as {
              items: unknown[];
            }
          ).items.length,
        {
          timeout: 20_000,
        },
      )
      .toBe(0);
    await expect.poll(() => fake!.stats.clustersStopped, { timeout: 10_000 }).toBe(1);

    await custom.createNamespacedCustomObject({
      ...hive,
      namespace: "netstress",
      plural: "clusterpools",
      body: {
        apiVersion: "hive.openshift.io/v1",
        kind: "ClusterPool",
        metadata: { name: "released" },
        spec: {
          size: 1,
          baseDomain: "example.test",
          imageSetRef: { name: "pr-payload" },
          platform: { aws: { region: "us-east-1" } },
        },
      },
    });
    await custom.createNamespacedCustomObject({
      ...hive,
      namespace: "netstress",
      plural: "clusterclaims",
      body: {
        apiVersion: "hive.openshift.io/v1",
        kind: "ClusterClaim",
        metadata: { name: "brief" },
        spec: { clusterPoolName: "released", lifetime: "1h" },
      },
    });
    const claims = async () =>
      (
        (await custom.listNamespacedCustomObject({
          ...hive,
          namespace: "netstress",
          plural: "clusterclaims",
        })) as { items: Conditioned[] }
      ).items;
    await expect.poll(async () => (await claims())[0]?.spec.namespace, { timeout: 20_000 }).toBeDefined();
    const namespace = (await claims())[0]!.spec.namespace!;
    // The lifetime ends: Hive deletes the claim, and with it the claimed cluster.
    await expect.poll(async () => (await claims()).length, { timeout: 20_000 }).toBe(0);
    await expect
      .poll(
        async () =>
          (
            (await custom.listClusterCustomObject({ ...hive, plural: "clusterdeployments" })) as {
              items: Conditioned[];
            }
          ).items.map((d) => d.metadata.namespace),
        { timeout: 10_000 },
      )
      .not.toContain(namespace);
  });

  it("reads delete-after as Go's time.ParseDuration does, a leading-dot '.5h' included", async () => {
    // One Hive hour lasts two seconds: half an hour, one.
    fake = await startFakeHive({ installMs: 100, timeScale: 2000 / 3_600_000 });
    const { custom } = await setUp(fake);
    await custom.createNamespacedCustomObject({
      ...hive,
      namespace: "netstress",
      plural: "clusterdeployments",
      body: deploymentBody("half-hour", { "hive.openshift.io/delete-after": ".5h" }),
    });
    await expect.poll(() => fake!.stats.clustersStarted, { timeout: 20_000 }).toBe(1);
    await expect.poll(() => fake!.stats.clustersStopped, { timeout: 20_000 }).toBe(1);
  });
});
