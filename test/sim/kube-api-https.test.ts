import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeKubeApi, type FakeKubeApi } from "@netstress/testbed/sim/start-fake-kube-api.ts";

const run = promisify(execFile);
const KUBECTL = ["/usr/bin/kubectl", "/usr/local/bin/kubectl"].find((p) => existsSync(p));

let hub: FakeKubeApi;
let other: FakeKubeApi;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sim-https-"));
  [hub, other] = await Promise.all([
    startFakeKubeApi({ tls: true, name: "hub" }),
    startFakeKubeApi({ tls: true, name: "other" }),
  ]);
});

afterAll(async () => {
  await Promise.all([hub?.stop(), other?.stop()]);
  await rm(dir, { recursive: true, force: true });
});

const client = (kubeconfigPath: string) => {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfigPath);
  return { core: config.makeApiClient(CoreV1Api), custom: config.makeApiClient(CustomObjectsApi) };
};

const hive = { group: "hive.openshift.io", version: "v1" };

/** kubectl against a kubeconfig, never blocking this process (the servers live in it). */
async function kubectl(kubeconfigPath: string, ...args: string[]) {
  return run(KUBECTL!, ["--kubeconfig", kubeconfigPath, "--cache-dir", join(dir, "cache"), ...args], {
    encoding: "utf8",
    timeout: 60_000,
  });
}

describe("the simulated API server over HTTPS", () => {
  it("is verified against the CA in its kubeconfig and refuses a client that trusts another CA", async () => {
    expect(hub.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const nodes = await client(hub.kubeconfigPath).core.listNode();
    expect(nodes.items.map((n) => [n.metadata?.name, n.status?.nodeInfo?.architecture])).toEqual([
      ["node-amd64", "amd64"],
      ["node-arm64", "arm64"],
    ]);
    // The hub's address with the other server's CA: the certificate does not verify.
    const wrongCa = join(dir, "wrong-ca");
    await writeFile(wrongCa, other.kubeconfig.replace(other.url, hub.url));
    await expect(client(wrongCa).core.listNode()).rejects.toThrow(/certificate|self.signed|verify/i);
  });

  it("creates, reads, patches and lists Hive objects, keeps status apart and refuses stale writes", async () => {
    const { custom } = client(hub.kubeconfigPath);
    const created = (await custom.createNamespacedCustomObject({
      ...hive,
      namespace: "pool-a",
      plural: "clusterdeployments",
      body: {
        apiVersion: "hive.openshift.io/v1",
        kind: "ClusterDeployment",
        metadata: { name: "cd-1", labels: { team: "net" } },
        spec: { clusterName: "cd-1", baseDomain: "example.test", platform: { aws: { region: "us-east-1" } } },
        status: { ignored: true },
      },
    })) as { metadata: { resourceVersion: string; generation: number; namespace: string } };
    expect(created.metadata).toMatchObject({ namespace: "pool-a", generation: 1 });

    await custom.patchNamespacedCustomObject(
      {
        ...hive,
        namespace: "pool-a",
        plural: "clusterdeployments",
        name: "cd-1",
        body: { spec: { installed: true } },
      },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    await custom.patchNamespacedCustomObjectStatus(
      {
        ...hive,
        namespace: "pool-a",
        plural: "clusterdeployments",
        name: "cd-1",
        body: [{ op: "add", path: "/status", value: { powerState: "Running" } }],
      },
      setHeaderOptions("Content-Type", PatchStrategy.JsonPatch),
    );
    const read = (await custom.getNamespacedCustomObject({
      ...hive,
      namespace: "pool-a",
      plural: "clusterdeployments",
      name: "cd-1",
    })) as {
      metadata: { generation: number };
      spec: Record<string, unknown>;
      status: Record<string, unknown>;
    };
    expect(read.spec).toEqual({
      clusterName: "cd-1",
      baseDomain: "example.test",
      platform: { aws: { region: "us-east-1" } },
      installed: true,
    });
    expect(read.status).toEqual({ powerState: "Running" });
    expect(read.metadata.generation).toBe(2);

    await expect(
      custom.replaceNamespacedCustomObject({
        ...hive,
        namespace: "pool-a",
        plural: "clusterdeployments",
        name: "cd-1",
        body: { ...read, metadata: { ...read.metadata, resourceVersion: created.metadata.resourceVersion } },
      }),
    ).rejects.toMatchObject({ code: 409 });

    const everywhere = (await custom.listClusterCustomObject({ ...hive, plural: "clusterdeployments" })) as {
      items: { metadata: { namespace: string; name: string } }[];
    };
    expect(everywhere.items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`)).toContain(
      "pool-a/cd-1",
    );
    await expect(
      custom.createNamespacedCustomObject({
        ...hive,
        namespace: "pool-a",
        plural: "clusterdeployments",
        body: { metadata: { name: "Not_A_Name" } },
      }),
    ).rejects.toMatchObject({ code: 422 });
  });

  it.skipIf(!KUBECTL)(
    "answers kubectl (discovery, tables, -A, patch) with the token of its kubeconfig",
    async () => {
      hub.store.create("clusterimagesets", {
        metadata: { name: "img-4.20.0", namespace: "" },
        spec: { releaseImage: "quay.io/example/release@sha256:" + "a".repeat(64) },
      });
      const nodes = await kubectl(hub.kubeconfigPath, "get", "nodes");
      expect(nodes.stdout).toMatch(/^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\n/);
      expect(nodes.stdout).toMatch(/node-arm64\s+Ready/);
      const deployments = await kubectl(hub.kubeconfigPath, "get", "clusterdeployments", "-A");
      expect(deployments.stdout).toMatch(/^NAMESPACE\s+NAME\s+INFRAID\s+PLATFORM/);
      expect(deployments.stdout).toMatch(/pool-a\s+cd-1/);
      const images = await kubectl(
        hub.kubeconfigPath,
        "get",
        "clusterimagesets",
        "-o",
        "jsonpath={.items[*].spec.releaseImage}",
      );
      expect(images.stdout).toBe("quay.io/example/release@sha256:" + "a".repeat(64));
      await kubectl(hub.kubeconfigPath, "label", "clusterimageset", "img-4.20.0", "pool=ready");
      const labelled = await kubectl(hub.kubeconfigPath, "get", "imgset", "-l", "pool=ready", "-o", "name");
      expect(labelled.stdout.trim()).toBe("clusterimageset.hive.openshift.io/img-4.20.0");

      const wrongToken = join(dir, "wrong-token");
      await writeFile(wrongToken, hub.kubeconfig.replace(/token: .*/, "token: not-the-token"));
      await expect(kubectl(wrongToken, "get", "nodes")).rejects.toMatchObject({
        stderr: expect.stringMatching(/Unauthorized|must be logged in/),
      });
    },
  );
});
