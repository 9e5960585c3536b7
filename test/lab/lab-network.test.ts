import type { V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLab, type Lab } from "@netstress/testbed/lab/start-lab.ts";
import { labAvailable, testLabName } from "./lab-available.ts";
import {
  coreClient,
  connectFrom,
  hostNamespaces,
  startEchoPod,
  testImages,
  waitForPod,
} from "./lab-fixture.ts";

let lab: Lab;
const NS = "labtest";

describe.skipIf(!labAvailable)("a lab's network (root, ip netns)", () => {
  beforeAll(async () => {
    lab = await startLab({ name: testLabName("net"), nodes: 2, images: testImages, handleSignals: false });
    await coreClient(lab).createNamespace({ body: { metadata: { name: NS } } });
  }, 60_000);
  afterAll(async () => {
    await lab?.stop();
    expect((await hostNamespaces()).filter((n) => n.startsWith(`${testLabName("net")}-`))).toEqual([]);
  }, 30_000);

  it("gives pods addresses from their node's pod CIDR and carries TCP between pods on different nodes", async () => {
    const [a, b] = lab.nodes;
    const server = await startEchoPod(lab, { name: "echo-b", namespace: NS, node: b!.name });
    expect(server.status?.podIP).toMatch(/^10\.\d+\.1\./);
    expect(server.status?.hostIP).toBe(b!.ip);
    const client = await startEchoPod(lab, { name: "echo-a", namespace: NS, node: a!.name });
    expect(client.status?.podIP).toMatch(/^10\.\d+\.0\./);
    const netns = lab.podNetns(NS, "echo-a")!;
    expect(
      await connectFrom(netns, server.status!.podIP!, 8080, {
        expect: (r) => r === "echo-b",
        withinMs: 5000,
      }),
    ).toBe("echo-b");
    // Host to pod across nodes too: node a's own namespace reaches the pod on b.
    expect(await connectFrom(a!.netns, server.status!.podIP!, 8080)).toBe("echo-b");
  });

  it("tells pods where the API server is, and they reach it at the lab address", async () => {
    const core = coreClient(lab);
    await core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: "env" },
        spec: {
          nodeName: lab.nodes[0]!.name,
          containers: [
            {
              name: "env",
              image: "quay.io/netstress/lab-test:latest",
              command: [
                "node",
                "-e",
                `const e=process.env;console.log(JSON.stringify({host:e.KUBERNETES_SERVICE_HOST,port:e.KUBERNETES_SERVICE_PORT,pod:e.POD_NAME,ns:e.POD_NAMESPACE,ip:e.POD_IP,node:e.NODE_NAME,hostIP:e.HOST_IP}));
require("node:net").connect({host:e.KUBERNETES_SERVICE_HOST,port:Number(e.KUBERNETES_SERVICE_PORT)}).on("connect",()=>{console.log("api reachable");process.exit(0)}).on("error",(x)=>{console.log(x.code);process.exit(1)});`,
              ],
            },
          ],
        },
      },
    });
    const pod = await waitForPod(
      lab,
      NS,
      "env",
      (p) => p.status?.phase === "Succeeded" || p.status?.phase === "Failed",
    );
    const log = await core.readNamespacedPodLog({ namespace: NS, name: "env" });
    const [env, reach] = log.trim().split("\n");
    expect(JSON.parse(env!)).toEqual({
      host: lab.apiAddress.host,
      port: String(lab.apiAddress.port),
      pod: "env",
      ns: NS,
      ip: pod.status?.podIP,
      node: lab.nodes[0]!.name,
      hostIP: lab.nodes[0]!.ip,
    });
    expect(reach).toBe("api reachable");
  });

  it("a pod with a readiness probe is Ready only once its node reaches the server in it", async () => {
    const core = coreClient(lab);
    await core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: "slow" },
        spec: {
          nodeName: lab.nodes[1]!.name,
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: "slow",
              image: "quay.io/netstress/lab-test:latest",
              command: [
                "node",
                "-e",
                `setTimeout(() => require("node:http").createServer((q, s) => s.end("ok")).listen(8080), 1500)`,
              ],
              ports: [{ name: "http", containerPort: 8080 }],
              readinessProbe: { httpGet: { path: "/healthz", port: "http" }, periodSeconds: 1 },
            },
          ],
        },
      },
    });
    const ready = (p: V1Pod) => p.status?.conditions?.find((c) => c.type === "Ready")?.status;
    const running = await waitForPod(lab, NS, "slow", (p) => p.status?.phase === "Running");
    expect(ready(running)).toBe("False");
    const after = await waitForPod(lab, NS, "slow", (p) => ready(p) === "True");
    const started = Date.parse(
      after.status!.containerStatuses![0]!.state!.running!.startedAt as unknown as string,
    );
    const readyAt = Date.parse(
      after.status!.conditions!.find((c) => c.type === "Ready")!.lastTransitionTime as unknown as string,
    );
    // The server listens 1.5 s after the start; the API's timestamps are whole seconds.
    expect(readyAt - started).toBeGreaterThanOrEqual(1000);
    expect(after.status?.containerStatuses?.[0]?.ready).toBe(true);
  });

  it("deleting a pod stops its process and removes its namespace", async () => {
    await startEchoPod(lab, { name: "short", namespace: NS, node: lab.nodes[0]!.name });
    const netns = lab.podNetns(NS, "short")!;
    expect(await hostNamespaces()).toContain(netns);
    await coreClient(lab).deleteNamespacedPod({ namespace: NS, name: "short" });
    const deadline = Date.now() + 10_000;
    while ((await hostNamespaces()).includes(netns) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await hostNamespaces()).not.toContain(netns);
  });
});
