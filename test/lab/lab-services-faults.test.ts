import { DiscoveryV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLab, type Lab } from "@netstress/testbed/lab/start-lab.ts";
import { labAvailable, testLabName } from "./lab-available.ts";
import { connectFrom, coreClient, startEchoPod, testImages } from "./lab-fixture.ts";

let lab: Lab;
const NS = "svc";
let serverIP: string;
let clusterIP: string;
const names = new Set(["echo-0", "echo-1"]);

describe.skipIf(!labAvailable)("a lab's Services and faults (root, ip netns)", () => {
  beforeAll(async () => {
    lab = await startLab({ name: testLabName("svc"), nodes: 2, images: testImages, handleSignals: false });
    const core = coreClient(lab);
    await core.createNamespace({ body: { metadata: { name: NS } } });
    const [, b] = await Promise.all([
      startEchoPod(lab, { name: "echo-0", namespace: NS, node: lab.nodes[0]!.name, labels: { app: "echo" } }),
      startEchoPod(lab, { name: "echo-1", namespace: NS, node: lab.nodes[1]!.name, labels: { app: "echo" } }),
      startEchoPod(lab, {
        name: "client",
        namespace: NS,
        node: lab.nodes[0]!.name,
        labels: { app: "client" },
      }),
      startEchoPod(lab, {
        name: "host-1",
        namespace: NS,
        node: lab.nodes[1]!.name,
        hostNetwork: true,
        labels: {},
      }),
    ]);
    serverIP = b.status!.podIP!;
    const service = await core.createNamespacedService({
      namespace: NS,
      body: {
        metadata: { name: "echo" },
        spec: { selector: { app: "echo" }, ports: [{ name: "http", port: 80, targetPort: "echo" }] },
      },
    });
    clusterIP = service.spec!.clusterIP!;
  }, 60_000);
  afterAll(async () => lab?.stop(), 30_000);

  const client = () => lab.podNetns(NS, "client")!;

  it("gives a Service a ClusterIP from the Service CIDR, an EndpointSlice of its ready pods, and every node's proxy forwards to them", async () => {
    expect(clusterIP).toMatch(/^172\.30\.\d+\.\d+$/);
    expect(clusterIP).not.toBe(lab.plan.serviceCIDR.replace(/0\/24$/, "1"));
    const answer = await connectFrom(client(), clusterIP, 80, {
      expect: (a) => names.has(a),
      withinMs: 5000,
    });
    expect(names).toContain(answer);
    // From a host-network process on the other node too, once its proxy has synced (it polls).
    expect(names).toContain(
      await connectFrom(lab.nodes[1]!.netns, clusterIP, 80, { expect: (a) => names.has(a), withinMs: 5000 }),
    );
    // Both endpoints get connections.
    const seen = new Set<string>();
    for (let i = 0; i < 12 && seen.size < 2; i += 1) seen.add(await connectFrom(client(), clusterIP, 80));
    expect(seen).toEqual(names);
    const config = new KubeConfig();
    config.loadFromFile(lab.kubeconfigPath);
    const slices = await config.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({ namespace: NS });
    expect(slices.items).toHaveLength(1);
    expect(slices.items[0]!.metadata?.labels?.["kubernetes.io/service-name"]).toBe("echo");
    expect(slices.items[0]!.ports).toEqual([{ name: "http", port: 8080, protocol: "TCP" }]);
    expect(slices.items[0]!.endpoints.map((e) => [e.targetRef?.name, e.conditions?.ready]).sort()).toEqual([
      ["echo-0", true],
      ["echo-1", true],
    ]);
  });

  it("drop-route: one node's pods lose the other node's pods until cleared", async () => {
    const fault = { kind: "drop-route", from: lab.nodes[0]!.name, to: lab.nodes[1]!.name } as const;
    await lab.inject(fault);
    expect(await connectFrom(client(), serverIP, 8080, { timeoutMs: 500 })).toBe("timeout");
    await lab.clear(fault);
    expect(await connectFrom(client(), serverIP, 8080)).toBe("echo-1");
  });

  it("stop-service-proxy: ClusterIPs refuse on that node only, until cleared", async () => {
    const fault = { kind: "stop-service-proxy", node: lab.nodes[0]!.name } as const;
    await lab.inject(fault);
    expect(await connectFrom(client(), clusterIP, 80)).toBe("ECONNREFUSED");
    expect(names).toContain(await connectFrom(lab.nodes[1]!.netns, clusterIP, 80));
    await lab.clear(fault);
    expect(names).toContain(await connectFrom(client(), clusterIP, 80));
  });

  it("block-host: a node and its pods cannot talk, other nodes' pods still reach it, until cleared", async () => {
    const node = lab.nodes[1]!;
    const fault = { kind: "block-host", node: node.name } as const;
    const server = lab.podNetns(NS, "echo-1")!;
    await lab.inject(fault);
    expect(await connectFrom(node.netns, serverIP, 8080)).toBe("EACCES");
    expect(await connectFrom(server, node.ip, 8080, { timeoutMs: 500 })).toBe("timeout");
    expect(await connectFrom(client(), node.ip, 8080)).toBe("host-1");
    expect(await connectFrom(client(), serverIP, 8080)).toBe("echo-1");
    await lab.clear(fault);
    expect(await connectFrom(node.netns, serverIP, 8080)).toBe("echo-1");
    expect(await connectFrom(server, node.ip, 8080)).toBe("host-1");
    expect(lab.faults()).toEqual([]);
  });

  it("names the nodes it has when a fault names another", async () => {
    await expect(lab.inject({ kind: "block-host", node: "nope" })).rejects.toThrow(
      `lab ${lab.name} has no node "nope": its nodes are ${lab.name}-node-0, ${lab.name}-node-1`,
    );
  });
});
