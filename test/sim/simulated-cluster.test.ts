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
import {
  startSimulatedCluster,
  type SimulatedCluster,
} from "@netstress/testbed/sim/start-simulated-cluster.ts";

const run = promisify(execFile);
const KUBECTL = ["/usr/bin/kubectl", "/usr/local/bin/kubectl"].find((p) => existsSync(p));
const digest = (c: string) => `quay.io/example/release@sha256:${c.repeat(64)}`;
const RELEASED = digest("a");
const PR = digest("b");
const ovn = (c: string) => ({ image: `quay.io/example/ovn@sha256:${c.repeat(64)}`, commit: c.repeat(40) });

interface ClusterVersion {
  spec: { desiredUpdate?: unknown };
  status: {
    desired: { image: string; version: string };
    history: { state: string; image: string }[];
    conditions: { type: string; status: string; message?: string }[];
  };
}

let cluster: SimulatedCluster | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

function clients(c: SimulatedCluster) {
  const config = new KubeConfig();
  config.loadFromString(c.kubeconfig);
  return {
    core: config.makeApiClient(CoreV1Api),
    apps: config.makeApiClient(AppsV1Api),
    custom: config.makeApiClient(CustomObjectsApi),
  };
}

const config = { group: "config.openshift.io", version: "v1" };
const readVersion = async (c: SimulatedCluster) =>
  (await clients(c).custom.getClusterCustomObject({
    ...config,
    plural: "clusterversions",
    name: "version",
  })) as ClusterVersion;
const condition = (cv: ClusterVersion, type: string) =>
  cv.status.conditions.find((x) => x.type === type)?.status;

describe("a simulated cluster under test", () => {
  it("says what it runs: ClusterVersion, nodes of its arch, Infrastructure, Network and the payload's ovn-kubernetes build", async () => {
    cluster = await startSimulatedCluster({
      arch: "arm64",
      payload: RELEASED,
      version: "4.20.3",
      nodes: 2,
      components: {
        "ovn-kubernetes": ovn("1"),
        sdn: { image: "quay.io/example/sdn@sha256:" + "2".repeat(64) },
      },
    });
    const { core, apps, custom } = clients(cluster);
    const cv = await readVersion(cluster);
    expect(cv.status.desired).toEqual({ version: "4.20.3", image: RELEASED });
    expect(cv.status.history.map((h) => [h.state, h.image])).toEqual([["Completed", RELEASED]]);
    expect([condition(cv, "Available"), condition(cv, "Progressing"), condition(cv, "Failing")]).toEqual([
      "True",
      "False",
      "False",
    ]);
    const nodes = (await core.listNode()).items;
    expect(nodes).toHaveLength(5);
    expect(new Set(nodes.map((n) => n.status?.nodeInfo?.architecture))).toEqual(new Set(["arm64"]));
    const network = (await custom.getClusterCustomObject({
      ...config,
      plural: "networks",
      name: "cluster",
    })) as {
      status: { networkType: string };
    };
    expect(network.status.networkType).toBe("OVNKubernetes");
    const infrastructure = (await custom.getClusterCustomObject({
      ...config,
      plural: "infrastructures",
      name: "cluster",
    })) as { status: { platformStatus: { type: string }; apiServerURL: string } };
    expect(infrastructure.status).toMatchObject({
      platformStatus: { type: "AWS" },
      apiServerURL: cluster.url,
    });
    const ds = await apps.readNamespacedDaemonSet({
      namespace: "openshift-ovn-kubernetes",
      name: "ovnkube-node",
    });
    expect(new Set(ds.spec?.template.spec?.containers.map((c) => c.image))).toEqual(
      new Set([ovn("1").image]),
    );
    expect(ds.metadata?.annotations?.["io.openshift.build.commit.id"]).toBe(ovn("1").commit);
    // An OVN-Kubernetes cluster runs no openshift-sdn.
    await expect(
      apps.readNamespacedDaemonSet({ namespace: "openshift-sdn", name: "sdn" }),
    ).rejects.toMatchObject({
      code: 404,
    });
    if (KUBECTL) {
      const { stdout } = await run(
        KUBECTL,
        ["--kubeconfig", cluster.kubeconfigPath, "get", "clusterversion"],
        {
          encoding: "utf8",
        },
      );
      expect(stdout).toMatch(/version\s+4\.20\.3\s+True\s+False\s+Cluster version is 4\.20\.3/);
    }
  });

  it("upgrades on spec.desiredUpdate with force — Partial, then Completed on the new payload's builds — and refuses it unforced", async () => {
    cluster = await startSimulatedCluster({
      arch: "amd64",
      payload: RELEASED,
      components: { "ovn-kubernetes": ovn("1") },
      upgradeMs: 3000,
      resolveRelease: (payload) => {
        if (payload !== PR) throw new Error(`unknown payload ${payload}`);
        return { version: "4.20.0-0.pr", components: { "ovn-kubernetes": ovn("9") } };
      },
    });
    const { apps, custom } = clients(cluster);
    const ask = (desiredUpdate: object) =>
      custom.patchClusterCustomObject(
        { ...config, plural: "clusterversions", name: "version", body: { spec: { desiredUpdate } } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );

    await ask({ image: PR });
    await expect
      .poll(async () => condition(await readVersion(cluster!), "ReleaseAccepted"), { timeout: 10_000 })
      .toBe("False");
    expect((await readVersion(cluster)).status.desired.image).toBe(RELEASED);

    await ask({ image: PR, force: true });
    await expect
      .poll(async () => condition(await readVersion(cluster!), "Progressing"), { timeout: 10_000 })
      .toBe("True");
    const during = await readVersion(cluster);
    expect(during.status.desired.image).toBe(PR);
    expect(during.status.history.map((h) => [h.state, h.image])).toEqual([
      ["Partial", PR],
      ["Completed", RELEASED],
    ]);
    expect(cluster.payload()).toBe(RELEASED);

    await expect
      .poll(async () => condition(await readVersion(cluster!), "Progressing"), { timeout: 15_000 })
      .toBe("False");
    const after = await readVersion(cluster);
    expect(after.status.history.map((h) => [h.state, h.image])).toEqual([
      ["Completed", PR],
      ["Completed", RELEASED],
    ]);
    expect(condition(after, "Available")).toBe("True");
    expect(cluster.payload()).toBe(PR);
    const ds = await apps.readNamespacedDaemonSet({
      namespace: "openshift-ovn-kubernetes",
      name: "ovnkube-node",
    });
    expect(ds.spec?.template.spec?.containers[0]?.image).toBe(ovn("9").image);
  });

  it("is unreachable once stopped, as a lost cluster", async () => {
    cluster = await startSimulatedCluster({ arch: "amd64", payload: RELEASED });
    const { core } = clients(cluster);
    await core.listNode();
    await cluster.stop();
    await expect(core.listNode()).rejects.toThrow(/ECONNREFUSED|connect/);
  });

  it("says what was wrong with its options", async () => {
    await expect(startSimulatedCluster({ arch: "sparc" as "amd64", payload: RELEASED })).rejects.toThrow(
      /arch must be one of amd64, arm64/,
    );
    await expect(startSimulatedCluster({ arch: "amd64", payload: " " })).rejects.toThrow(
      /needs the payload it runs/,
    );
  });
});
