import { afterAll, describe, expect, it } from "vitest";
import { startLab, type Lab } from "@netstress/testbed/lab/start-lab.ts";
import { labAvailable, testLabName } from "./lab-available.ts";
import { connectFrom, coreClient, startEchoPod, testImages } from "./lab-fixture.ts";

const labs: Lab[] = [];

describe.skipIf(!labAvailable)("two labs at once, one per arm (root, ip netns)", () => {
  afterAll(async () => Promise.all(labs.map((lab) => lab.stop())), 30_000);

  it("take distinct address ranges and each carries its own traffic; a second lab of a taken name is refused", async () => {
    labs.push(
      ...(await Promise.all(
        [testLabName("arma"), testLabName("armb")].map((name) =>
          startLab({ name, nodes: 1, images: testImages, handleSignals: false }),
        ),
      )),
    );
    const [a, b] = labs as [Lab, Lab];
    expect(a.plan.slot).not.toBe(b.plan.slot);
    expect(a.plan.underlayCIDR).not.toBe(b.plan.underlayCIDR);
    expect(a.plan.clusterCIDR).not.toBe(b.plan.clusterCIDR);
    expect(a.plan.serviceCIDR).not.toBe(b.plan.serviceCIDR);
    for (const lab of labs) {
      await coreClient(lab).createNamespace({ body: { metadata: { name: "arm" } } });
      const pod = await startEchoPod(lab, {
        name: `echo-${lab.name}`,
        namespace: "arm",
        node: lab.nodes[0]!.name,
      });
      expect(
        await connectFrom(lab.nodes[0]!.netns, pod.status!.podIP!, 8080, {
          withinMs: 5000,
          expect: (r) => r !== "ECONNREFUSED",
        }),
      ).toBe(`echo-${lab.name}`);
    }
    // The other lab's pod is not reachable from this lab's node: separate networks.
    const other = await coreClient(b).readNamespacedPod({ namespace: "arm", name: `echo-${b.name}` });
    expect(await connectFrom(a.nodes[0]!.netns, other.status!.podIP!, 8080, { timeoutMs: 300 })).toMatch(
      /ENETUNREACH|timeout/,
    );
    await expect(startLab({ name: a.name, nodes: 1, handleSignals: false })).rejects.toThrow(
      `lab ${a.name} is running already`,
    );
  }, 60_000);
});
