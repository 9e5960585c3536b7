import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AppsV1Api, CoreV1Api, DiscoveryV1Api, KubeConfig, type V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PodNetwork } from "@netstress/testbed/sim/pod-network.ts";
import { startFakeKubeApi, type FakeKubeApi } from "@netstress/testbed/sim/start-fake-kube-api.ts";

let api: FakeKubeApi;
let dir: string;
const IMAGE = "example.com/node:1";
const SLEEP = `process.on("SIGTERM", () => { require("node:fs").writeFileSync(process.env.MARK, "SIGTERM"); process.exit(0); }); console.log("listening for SIGTERM"); setInterval(() => {}, 1000);`;

/** A pod network without namespaces: addresses handed out in order, processes run as they are. */
let next = 0;
const network: PodNetwork = {
  attach: (pod) =>
    Promise.resolve({
      podIP: `10.128.0.${(next += 1)}`,
      hostIP: pod.nodeName === "node-a" ? "192.0.2.1" : "192.0.2.2",
      env: { KUBERNETES_SERVICE_HOST: "192.0.2.100" },
      wrap: (argv) => argv,
    }),
  detach: () => Promise.resolve(),
};

function clients() {
  const config = new KubeConfig();
  config.loadFromFile(api.kubeconfigPath);
  return {
    core: config.makeApiClient(CoreV1Api),
    apps: config.makeApiClient(AppsV1Api),
    discovery: config.makeApiClient(DiscoveryV1Api),
  };
}

/** Once its log says so, the pod's process handles SIGTERM (before, SIGTERM would just end it). */
const handlesSigterm = (namespace: string, name: string) =>
  until(
    () =>
      clients()
        .core.readNamespacedPodLog({ namespace, name })
        .catch(() => ""),
    (log) => log.includes("listening for SIGTERM"),
  );

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`never got there: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const pod = (name: string, node: string, labels: Record<string, string>, grace = 5): V1Pod => ({
  metadata: { name, labels },
  spec: {
    nodeName: node,
    terminationGracePeriodSeconds: grace,
    containers: [
      {
        name: "main",
        image: IMAGE,
        command: ["node", "-e", SLEEP],
        env: [
          { name: "MARK", value: join(dir, name) },
          { name: "MY_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
        ],
        ports: [{ name: "web", containerPort: 8080 }],
      },
    ],
  },
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sim-services-"));
  api = await startFakeKubeApi({
    nodes: [
      { name: "node-a", labels: { role: "x" }, internalIP: "192.0.2.1", podCIDR: "10.128.0.0/24" },
      { name: "node-b", labels: { role: "x" }, internalIP: "192.0.2.2", podCIDR: "10.128.1.0/24" },
    ],
    images: { [IMAGE]: { commands: { node: [process.execPath] } } },
    maxRunning: 50,
    podNetwork: network,
    gracefulTermination: true,
    daemonSetPods: true,
    serviceCIDR: "172.30.5.0/24",
  });
  await clients().core.createNamespace({ body: { metadata: { name: "t" } } });
});

afterAll(async () => {
  await api?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("Services, EndpointSlices and DaemonSets of the simulated API", () => {
  it("says which node a Node is and where its pods' addresses come from", async () => {
    const node = await clients().core.readNode({ name: "node-b" });
    expect(node.spec?.podCIDR).toBe("10.128.1.0/24");
    expect(node.status?.addresses?.find((a) => a.type === "InternalIP")?.address).toBe("192.0.2.2");
  });

  it("gives a Service a ClusterIP, refuses one taken, and keeps an EndpointSlice of its ready pods", async () => {
    const { core, discovery } = clients();
    const service = await core.createNamespacedService({
      namespace: "t",
      body: {
        metadata: { name: "web" },
        spec: { selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: "web" }] },
      },
    });
    expect(service.spec?.clusterIP).toBe("172.30.5.1");
    expect(service.spec?.ports?.[0]?.protocol).toBe("TCP");
    await expect(
      core.createNamespacedService({
        namespace: "t",
        body: { metadata: { name: "twin" }, spec: { clusterIP: "172.30.5.1", ports: [{ port: 80 }] } },
      }),
    ).rejects.toMatchObject({ code: 422 });
    await core.createNamespacedPod({ namespace: "t", body: pod("web-1", "node-b", { app: "web" }) });
    const running = await until(
      () => core.readNamespacedPod({ namespace: "t", name: "web-1" }),
      (p) => p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false,
    );
    expect(running.spec?.nodeName).toBe("node-b");
    expect(running.status?.hostIP).toBe("192.0.2.2");
    const slices = await until(
      () =>
        discovery.listNamespacedEndpointSlice({
          namespace: "t",
          labelSelector: "kubernetes.io/service-name=web",
        }),
      (s) => s.items[0]?.endpoints.length === 1,
    );
    expect(slices.items[0]!.ports).toEqual([{ name: "http", port: 8080, protocol: "TCP" }]);
    expect(slices.items[0]!.endpoints[0]).toMatchObject({
      addresses: [running.status!.podIP],
      conditions: { ready: true },
      nodeName: "node-b",
      targetRef: { kind: "Pod", name: "web-1" },
    });
    await handlesSigterm("t", "web-1");
    await core.deleteNamespacedPod({ namespace: "t", name: "web-1" });
    await until(
      () => discovery.listNamespacedEndpointSlice({ namespace: "t" }),
      (s) => s.items[0]?.endpoints.length === 0,
    );
    // The pod was given its grace: SIGTERM, which it answered.
    expect(
      await until(
        () => readFile(join(dir, "web-1"), "utf8").catch(() => ""),
        (m) => m !== "",
      ),
    ).toBe("SIGTERM");
    await core.deleteNamespacedService({ namespace: "t", name: "web" });
    await until(
      () => discovery.listNamespacedEndpointSlice({ namespace: "t" }),
      (s) => s.items.length === 0,
    );
  });

  it("runs a DaemonSet's pod on every node, replaces a deleted one, and rolls a new template node by node", async () => {
    const { core, apps } = clients();
    const template = pod("unused", "", { app: "agent" }, 1);
    delete template.spec!.nodeName;
    await apps.createNamespacedDaemonSet({
      namespace: "t",
      body: {
        metadata: { name: "agent" },
        spec: {
          selector: { matchLabels: { app: "agent" } },
          template: { metadata: template.metadata, spec: template.spec! },
        },
      },
    });
    const list = () => core.listNamespacedPod({ namespace: "t", labelSelector: "app=agent" });
    const ready = (p: V1Pod) => p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
    const first = await until(list, (l) => l.items.length === 2 && l.items.every(ready));
    expect(first.items.map((p) => p.spec?.nodeName).sort()).toEqual(["node-a", "node-b"]);
    const gone = first.items.find((p) => p.spec?.nodeName === "node-a")!;
    await core.deleteNamespacedPod({ namespace: "t", name: gone.metadata!.name! });
    const replaced = await until(
      list,
      (l) =>
        l.items.length === 2 &&
        !l.items.some((p) => p.metadata?.name === gone.metadata?.name) &&
        l.items.every(ready),
    );
    expect(replaced.items.map((p) => p.spec?.nodeName).sort()).toEqual(["node-a", "node-b"]);

    await apps
      .patchNamespacedDaemonSet({
        namespace: "t",
        name: "agent",
        body: [{ op: "replace", path: "/spec/template/metadata/labels/version", value: "2" }],
      })
      .catch(async () => {
        const ds = await apps.readNamespacedDaemonSet({ namespace: "t", name: "agent" });
        ds.spec!.template.metadata!.labels = { app: "agent", version: "2" };
        await apps.replaceNamespacedDaemonSet({ namespace: "t", name: "agent", body: ds });
      });
    let mostOutdatedGone = 0;
    const rolled = await until(
      async () => {
        const l = await list();
        const current = l.items.filter((p) => p.metadata?.labels?.version === "2").length;
        mostOutdatedGone = Math.max(mostOutdatedGone, 2 - l.items.filter(ready).length);
        return { l, current };
      },
      ({ l, current }) => current === 2 && l.items.length === 2 && l.items.every(ready),
      20_000,
    );
    expect(rolled.l.items.map((p) => p.spec?.nodeName).sort()).toEqual(["node-a", "node-b"]);
    expect(mostOutdatedGone).toBeLessThanOrEqual(1);
    const ds = await until(
      () => apps.readNamespacedDaemonSet({ namespace: "t", name: "agent" }),
      (d) => d.status?.updatedNumberScheduled === 2 && d.status.numberReady === 2,
    );
    expect(ds.status).toMatchObject({
      desiredNumberScheduled: 2,
      currentNumberScheduled: 2,
      numberAvailable: 2,
    });
  }, 30_000);

  it("deleting a Namespace deletes what is in it, and its pods' processes stop", async () => {
    const { core } = clients();
    await core.createNamespace({ body: { metadata: { name: "doomed" } } });
    await core.createNamespacedPod({ namespace: "doomed", body: pod("p", "node-a", {}) });
    await until(
      () => core.readNamespacedPod({ namespace: "doomed", name: "p" }),
      (p) => p.status?.phase === "Running",
    );
    await handlesSigterm("doomed", "p");
    await core.deleteNamespace({ name: "doomed" });
    await expect(core.readNamespacedPod({ namespace: "doomed", name: "p" })).rejects.toMatchObject({
      code: 404,
    });
    expect(
      await until(
        () => readFile(join(dir, "p"), "utf8").catch(() => ""),
        (m) => m !== "",
      ),
    ).toBe("SIGTERM");
  });
});
