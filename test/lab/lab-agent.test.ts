import {
  CoordinationV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LAB_PAYLOADS } from "@netstress/testbed/lab/lab-payloads.ts";
import { AGENT_DAEMONSET, AGENT_NAMESPACE, startLab, type Lab } from "@netstress/testbed/lab/start-lab.ts";
import { eventually } from "../helpers/github-api.ts";
import { labAvailable, testLabName } from "./lab-available.ts";
import { connectLoop, coreClient, startEchoPod, testImages, waitForPod } from "./lab-fixture.ts";

let lab: Lab;
const NS = "agent";

interface ClusterVersion {
  status: { desired: { image: string }; history: { state: string; image: string }[] };
}

async function clusterVersion(): Promise<ClusterVersion> {
  const config = new KubeConfig();
  config.loadFromFile(lab.kubeconfigPath);
  return (await config.makeApiClient(CustomObjectsApi).getClusterCustomObject({
    group: "config.openshift.io",
    version: "v1",
    plural: "clusterversions",
    name: "version",
  })) as ClusterVersion;
}

/** Deletes node's agent pod while a pod on the other node connects across: what the restart cost. */
async function restartAgentUnderTraffic(node: string, target: string, from: string) {
  const core = coreClient(lab);
  const agents = await core.listNamespacedPod({
    namespace: AGENT_NAMESPACE,
    labelSelector: `app=${AGENT_DAEMONSET}`,
  });
  const agent = agents.items.find((p) => p.spec?.nodeName === node)!;
  const loop = connectLoop(lab.podNetns(NS, from)!, target, 8080);
  // Traffic flows before the agent goes, and is watched until its replacement is Ready (its routes
  // programmed) and a second of connections (20) got through since: as long as a loaded machine needs.
  await loop.succeeded(1);
  await core.deleteNamespacedPod({ namespace: AGENT_NAMESPACE, name: agent.metadata!.name! });
  await eventually(async () => {
    const pods = await core.listNamespacedPod({
      namespace: AGENT_NAMESPACE,
      labelSelector: `app=${AGENT_DAEMONSET}`,
    });
    return pods.items.some(
      (p) =>
        p.spec?.nodeName === node &&
        p.metadata?.name !== agent.metadata?.name &&
        p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
    );
  }, 60_000);
  await loop.succeeded(loop.successes() + 20);
  const result = await loop.stop();
  const after = await core.listNamespacedPod({
    namespace: AGENT_NAMESPACE,
    labelSelector: `app=${AGENT_DAEMONSET}`,
  });
  const replacement = after.items.find((p) => p.spec?.nodeName === node);
  expect(replacement?.metadata?.name).not.toBe(agent.metadata?.name);
  return result;
}

describe.skipIf(!labAvailable)("the lab's node agent, released and PR builds (root, ip netns)", () => {
  beforeAll(async () => {
    lab = await startLab({
      name: testLabName("agent"),
      nodes: 2,
      build: "released",
      images: testImages,
      handleSignals: false,
    });
    await coreClient(lab).createNamespace({ body: { metadata: { name: NS } } });
    await startEchoPod(lab, { name: "server", namespace: NS, node: lab.nodes[1]!.name });
    await startEchoPod(lab, { name: "client", namespace: NS, node: lab.nodes[0]!.name });
  }, 60_000);
  afterAll(async () => lab?.stop(), 30_000);

  it("restarting the released agent loses no cross-node connection; after an upgrade to the PR payload a restart loses about 2 s", async () => {
    const server = await waitForPod(lab, NS, "server", () => true);
    const ip = server.status!.podIP!;
    const released = await restartAgentUnderTraffic(lab.nodes[1]!.name, ip, "client");
    expect(released.attempts).toBeGreaterThan(20);
    expect(released.failures).toBe(0);

    const config = new KubeConfig();
    config.loadFromFile(lab.kubeconfigPath);
    await config.makeApiClient(CustomObjectsApi).patchClusterCustomObject(
      {
        group: "config.openshift.io",
        version: "v1",
        plural: "clusterversions",
        name: "version",
        body: { spec: { desiredUpdate: { image: LAB_PAYLOADS.pr.payload, force: true } } },
      },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    // A generous deadline: the agents roll one node at a time, and a loaded machine slows each.
    const deadline = Date.now() + 90_000;
    let cv = await clusterVersion();
    while (
      cv.status.history[0]?.state !== "Completed" ||
      cv.status.history[0].image !== LAB_PAYLOADS.pr.payload
    ) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 200));
      cv = await clusterVersion();
    }
    const agents = await coreClient(lab).listNamespacedPod({
      namespace: AGENT_NAMESPACE,
      labelSelector: `app=${AGENT_DAEMONSET}`,
    });
    expect(agents.items.map((p) => p.spec?.containers[0]?.image)).toEqual(
      lab.nodes.map(() => LAB_PAYLOADS.pr.agentImage),
    );
    expect(agents.items.every((p) => p.status?.phase === "Running")).toBe(true);

    const pr = await restartAgentUnderTraffic(lab.nodes[1]!.name, ip, "client");
    expect(pr.lostMs).toBeGreaterThan(1500);
    expect(pr.lostMs).toBeLessThan(4000);
  }, 180_000);

  it("the control plane has one leader (Lease ovn-kubernetes-master); deleting its pod hands leadership to another pod", async () => {
    const config = new KubeConfig();
    config.loadFromFile(lab.kubeconfigPath);
    const coordination = config.makeApiClient(CoordinationV1Api);
    const holder = async () =>
      (await coordination.readNamespacedLease({ namespace: AGENT_NAMESPACE, name: "ovn-kubernetes-master" }))
        .spec?.holderIdentity;
    const core = coreClient(lab);
    const pods = await core.listNamespacedPod({
      namespace: AGENT_NAMESPACE,
      labelSelector: "app=ovnkube-control-plane",
    });
    expect(pods.items).toHaveLength(2);
    const leader = await holder();
    expect(pods.items.map((p) => p.metadata?.name)).toContain(leader);
    await core.deleteNamespacedPod({ namespace: AGENT_NAMESPACE, name: leader! });
    const deadline = Date.now() + 10_000;
    let next = await holder();
    while (!next || next === leader) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 200));
      next = await holder();
    }
    const after = await core.listNamespacedPod({
      namespace: AGENT_NAMESPACE,
      labelSelector: "app=ovnkube-control-plane",
    });
    expect(after.items.map((p) => p.metadata?.name)).toContain(next);
  }, 20_000);
});
