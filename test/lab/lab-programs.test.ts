import type { V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LAB_PAYLOADS } from "@netstress/testbed/lab/lab-payloads.ts";
import { PROBE_IMAGE, startLab, type Lab } from "@netstress/testbed/lab/start-lab.ts";
import { labAvailable, testLabName } from "./lab-available.ts";
import { coreClient, waitForPod } from "./lab-fixture.ts";

let lab: Lab;
const NAMESPACE = "programs";

async function runPod(name: string, image: string, command: string[]): Promise<V1Pod> {
  await coreClient(lab).createNamespacedPod({
    namespace: NAMESPACE,
    body: {
      metadata: { name },
      spec: {
        nodeName: lab.nodes[0]!.name,
        restartPolicy: "Never",
        terminationGracePeriodSeconds: 1,
        containers: [{ name: "main", image, command }],
      },
    },
  });
  return waitForPod(lab, NAMESPACE, name, (p) =>
    ["Running", "Succeeded", "Failed"].includes(p.status!.phase!),
  );
}

// The lab's kubelet runs its pods' commands as root on the host: an image's `netstress` once ran
// any netstress command line for any pod (`netstress lab down …`, `netstress serve` …).
describe.skipIf(!labAvailable)("the lab's kubelet runs only the lab's own programs (root, ip netns)", () => {
  beforeAll(async () => {
    lab = await startLab({ name: testLabName("prog"), nodes: 1, handleSignals: false });
    await coreClient(lab).createNamespace({ body: { metadata: { name: NAMESPACE } } });
  }, 120_000);
  afterAll(() => lab?.stop(), 30_000);

  it("refuses another command line of the probe image, the pod failing with reason CommandNotAllowed", async () => {
    const pod = await runPod("not-a-probe", PROBE_IMAGE, ["netstress", "lab", "status"]);
    expect(pod.status!.phase).toBe("Failed");
    expect(pod.status!.containerStatuses![0]!.state!.terminated).toMatchObject({
      exitCode: 126,
      reason: "CommandNotAllowed",
      message: `the lab runs only its own programs as root: this image runs "netstress ext probe-server …", not "netstress lab status"`,
    });
  }, 60_000);

  it("refuses arguments the agent image's programs do not take", async () => {
    const pod = await runPod("agent-args", LAB_PAYLOADS.released.agentImage, ["ovnkube", "--build", "pr"]);
    expect(pod.status!.phase).toBe("Failed");
    expect(pod.status!.containerStatuses![0]!.state!.terminated).toMatchObject({
      reason: "CommandNotAllowed",
      message: expect.stringContaining(`not "ovnkube --build pr"`),
    });
  }, 60_000);

  it("runs the probe server the network extension's probe pods run", async () => {
    const pod = await runPod("probe", PROBE_IMAGE, ["netstress", "ext", "probe-server", "--port", "8080"]);
    expect(pod.status!.phase).toBe("Running");
  }, 60_000);
});
