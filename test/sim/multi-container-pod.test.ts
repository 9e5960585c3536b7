import { CoreV1Api, KubeConfig, type V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeKubeApi, type FakeKubeApi } from "@netstress/testbed/sim/start-fake-kube-api.ts";

const IMAGE = "example.com/node:1";

let api: FakeKubeApi;
let core: CoreV1Api;
beforeAll(async () => {
  api = await startFakeKubeApi({
    images: { [IMAGE]: { commands: { node: [process.execPath] } } },
    maxRunning: 2,
  });
  const config = new KubeConfig();
  config.loadFromFile(api.kubeconfigPath);
  core = config.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: "pods" } } });
});
afterAll(async () => {
  await api?.stop();
});

const ended = (name: string) =>
  new Promise<V1Pod>((resolve) => {
    const off = api.store.subscribe((event) => {
      const phase = (event.object.status as { phase?: string } | undefined)?.phase;
      if (
        event.resource === "pods" &&
        event.object.metadata.name === name &&
        /Succeeded|Failed/.test(phase ?? "")
      ) {
        off();
        resolve(event.object as unknown as V1Pod);
      }
    });
  });

const node = (name: string, script: string, env: Record<string, string>, mounts: [string, string][]) => ({
  name,
  image: IMAGE,
  command: ["node", "-e", script],
  env: Object.entries(env).map(([n, value]) => ({ name: n, value })),
  volumeMounts: mounts.map(([volume, mountPath]) => ({ name: volume, mountPath })),
});

describe("a pod of several containers in the simulated kubelet", () => {
  it("runs each as its own process, with its own env, mounts and log; a path of another's mount does not resolve", async () => {
    // "writer" leaves a file in the shared volume and one in its own; "reader" waits for the first
    // and tries the second at the writer's path, which is not mounted in the reader.
    const writer = `const fs = require("node:fs");
fs.writeFileSync(process.env.OWN + "/secret", "writer's own");
// Whole or not at all: the reader polls for the file, and one created but not yet written reads empty.
fs.writeFileSync(process.env.SHARED + "/note.partial", "from the writer");
fs.renameSync(process.env.SHARED + "/note.partial", process.env.SHARED + "/note");
console.log("writer: " + process.env.WHO);`;
    const reader = `const fs = require("node:fs");
const wait = () => fs.existsSync(process.env.SHARED + "/note") ? read() : setTimeout(wait, 20);
const read = () => {
  console.log("reader: " + process.env.WHO + ", " + fs.readFileSync(process.env.SHARED + "/note", "utf8"));
  try { fs.readFileSync(process.env.OTHER + "/secret"); console.log("reader: read the writer's own"); }
  catch (error) { console.log("reader: " + error.code); }
  process.exit(3);
};
wait();`;
    const done = ended("two");
    await core.createNamespacedPod({
      namespace: "pods",
      body: {
        metadata: { name: "two" },
        spec: {
          restartPolicy: "Never",
          volumes: [
            { name: "shared", emptyDir: {} },
            { name: "own", emptyDir: {} },
          ],
          containers: [
            node("writer", writer, { WHO: "w", OWN: "/own", SHARED: "/shared" }, [
              ["shared", "/shared"],
              ["own", "/own"],
            ]),
            node("reader", reader, { WHO: "r", OTHER: "/own", SHARED: "/data" }, [["shared", "/data"]]),
          ],
        },
      },
    });
    const pod = await done;
    expect(pod.status?.phase).toBe("Failed");
    expect(pod.status?.containerStatuses?.map((c) => [c.name, c.state?.terminated?.exitCode])).toEqual([
      ["writer", 0],
      ["reader", 3],
    ]);
    const log = (container: string) =>
      core.readNamespacedPodLog({ namespace: "pods", name: "two", container });
    expect(await log("writer")).toBe("writer: w\n");
    expect(await log("reader")).toBe("reader: r, from the writer\nreader: ENOENT\n");
  });

  it("is Succeeded when every container exited 0, and deleting it ends all their processes", async () => {
    const done = ended("both-ok");
    const quick = `console.log("ok")`;
    await core.createNamespacedPod({
      namespace: "pods",
      body: {
        metadata: { name: "both-ok" },
        spec: { restartPolicy: "Never", containers: [node("a", quick, {}, []), node("b", quick, {}, [])] },
      },
    });
    expect((await done).status?.phase).toBe("Succeeded");

    const forever = `console.log(process.pid); setInterval(() => {}, 1000)`;
    await core.createNamespacedPod({
      namespace: "pods",
      body: {
        metadata: { name: "sleepers" },
        spec: {
          restartPolicy: "Never",
          containers: [node("a", forever, {}, []), node("b", forever, {}, [])],
        },
      },
    });
    const pidOf = async (container: string) =>
      Number(
        await core.readNamespacedPodLog({ namespace: "pods", name: "sleepers", container }).catch(() => ""),
      );
    await expect
      .poll(async () => (await pidOf("a")) > 0 && (await pidOf("b")) > 0, { timeout: 20_000 })
      .toBe(true);
    const started = [await pidOf("a"), await pidOf("b")];
    await core.deleteNamespacedPod({ namespace: "pods", name: "sleepers" });
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await expect.poll(() => started.filter(alive), { timeout: 20_000 }).toEqual([]);
  });
});
