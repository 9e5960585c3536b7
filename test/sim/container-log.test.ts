import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeKubeApi, type FakeKubeApi } from "@netstress/testbed/sim/start-fake-kube-api.ts";

const IMAGE = "example.com/node:1";
/**
 * The container's main process starts a child with its own output elsewhere, as a runner starts
 * test binaries; the child opens the main process's stdout through /proc, as anything of the same
 * user in a real container can, and writes a line into the container's log.
 */
const MAIN = `
const { spawn } = require("node:child_process");
console.log("main: started");
const child = spawn(process.execPath, ["-e", CHILD], { stdio: ["ignore", "ignore", "inherit"] });
child.on("exit", () => console.log("main: done"));
`;
const CHILD = `require("node:fs").appendFileSync("/proc/" + process.ppid + "/fd/1", "child: written through /proc\\n");`;

let api: FakeKubeApi;
beforeAll(async () => {
  api = await startFakeKubeApi({
    images: { [IMAGE]: { commands: { node: [process.execPath] } } },
    maxRunning: 2,
  });
});
afterAll(async () => {
  await api?.stop();
});

describe("a container's log in the simulated kubelet", () => {
  it("is a pipe the runtime reads, so a process of the container can write into it through /proc", async () => {
    const config = new KubeConfig();
    config.loadFromFile(api.kubeconfigPath);
    const core = config.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: "logs" } } });
    await core.createNamespacedPod({
      namespace: "logs",
      body: {
        metadata: { name: "writer" },
        spec: {
          restartPolicy: "Never",
          containers: [
            {
              name: "main",
              image: IMAGE,
              command: ["node", "-e", `const CHILD = ${JSON.stringify(CHILD)};${MAIN}`],
            },
          ],
        },
      },
    });
    const finished = new Promise<void>((resolve) => {
      const off = api.store.subscribe((event) => {
        const phase = (event.object.status as { phase?: string } | undefined)?.phase;
        if (event.resource === "pods" && (phase === "Succeeded" || phase === "Failed")) {
          off();
          resolve();
        }
      });
    });
    await finished;
    const log = await core.readNamespacedPodLog({ namespace: "logs", name: "writer", container: "main" });
    expect(log.split("\n").filter(Boolean)).toEqual([
      "main: started",
      "child: written through /proc",
      "main: done",
    ]);
  });
});
