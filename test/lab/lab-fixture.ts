import { execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { CoreV1Api, KubeConfig, type V1Pod } from "@kubernetes/client-node";
import type { Lab } from "@netstress/testbed/lab/start-lab.ts";

const exec = promisify(execFile);
export const TEST_IMAGE = "quay.io/netstress/lab-test:latest";
/** The test image runs plain node, for servers written inline. */
export const testImages = { [TEST_IMAGE]: { commands: { node: [process.execPath] } } };
const ECHO = `require("node:net").createServer((s) => s.end(process.env.POD_NAME + "\\n")).listen(8080)`;
const CONNECT_LOOP = fileURLToPath(new URL("./connect-loop.mjs", import.meta.url));

export function coreClient(lab: Lab): CoreV1Api {
  const config = new KubeConfig();
  config.loadFromFile(lab.kubeconfigPath);
  return config.makeApiClient(CoreV1Api);
}

/** An echo server pod (port 8080 answers its name) on a node, once Running with an address. */
export async function startEchoPod(
  lab: Lab,
  options: {
    name: string;
    namespace: string;
    node: string;
    hostNetwork?: boolean;
    labels?: Record<string, string>;
  },
): Promise<V1Pod> {
  const core = coreClient(lab);
  await core.createNamespacedPod({
    namespace: options.namespace,
    body: {
      metadata: { name: options.name, labels: options.labels ?? { app: "echo" } },
      spec: {
        nodeName: options.node,
        hostNetwork: options.hostNetwork ?? false,
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: "echo",
            image: TEST_IMAGE,
            command: ["node", "-e", ECHO],
            ports: [{ name: "echo", containerPort: 8080 }],
          },
        ],
      },
    },
  });
  return waitForPod(
    lab,
    options.namespace,
    options.name,
    (p) => p.status?.phase === "Running" && !!p.status.podIP,
  );
}

export async function waitForPod(
  lab: Lab,
  namespace: string,
  name: string,
  done: (pod: V1Pod) => boolean,
  timeoutMs = 20_000,
): Promise<V1Pod> {
  const core = coreClient(lab);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pod = await core.readNamespacedPod({ namespace, name }).catch(() => undefined);
    if (pod && done(pod)) return pod;
    if (Date.now() > deadline)
      throw new Error(`pod ${namespace}/${name} did not get there: ${JSON.stringify(pod?.status)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * One TCP connection from inside network namespace `netns` to host:port: the first line the
 * server sends, or the error (`ECONNREFUSED`, `EACCES`, `timeout` …). Retries until `expect`
 * holds or `withinMs` passes (a server's first second).
 */
export async function connectFrom(
  netns: string,
  host: string,
  port: number,
  options: { expect?: (answer: string) => boolean; withinMs?: number; timeoutMs?: number } = {},
): Promise<string> {
  const script = `const s=require("node:net").connect({host:${JSON.stringify(host)},port:${port}});
const t=setTimeout(()=>{console.log("timeout");process.exit(0)},${options.timeoutMs ?? 1000});
s.on("data",(d)=>{console.log(String(d).trim());process.exit(0)});
s.on("error",(e)=>{console.log(e.code);process.exit(0)});`;
  const deadline = Date.now() + (options.withinMs ?? 0);
  for (;;) {
    const { stdout } = await exec("ip", ["netns", "exec", netns, process.execPath, "-e", script]);
    const answer = stdout.trim();
    if (!options.expect || options.expect(answer) || Date.now() > deadline) return answer;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * A new TCP connection every 50 ms from `netns` to host:port until `stop()`, which resolves with
 * how much was lost. `successes()` counts the attempts that reached the server so far, and
 * `succeeded(n)` resolves once n have.
 */
export function connectLoop(
  netns: string,
  host: string,
  port: number,
): {
  successes: () => number;
  succeeded: (count: number) => Promise<void>;
  stop: () => Promise<{ attempts: number; failures: number; lostMs: number }>;
} {
  const child = spawn("ip", ["netns", "exec", netns, process.execPath, CONNECT_LOOP, host, String(port)], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let successes = 0;
  const waiters: { count: number; resolve: () => void }[] = [];
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
    successes = (stderr.match(/^ok$/gm) ?? []).length;
    for (const w of waiters.filter((w) => successes >= w.count)) w.resolve();
  });
  const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
  return {
    successes: () => successes,
    succeeded: (count) =>
      new Promise<void>((resolve, reject) => {
        if (successes >= count) return resolve();
        waiters.push({ count, resolve });
        void closed.then(() => reject(new Error(`the connect loop ended after ${successes} successes`)));
      }),
    stop: async () => {
      child.stdin.end();
      const code = await closed;
      if (code !== 0) throw new Error(`the connect loop exited with ${code}: ${stdout}`);
      return JSON.parse(stdout) as { attempts: number; failures: number; lostMs: number };
    },
  };
}

export async function hostNamespaces(): Promise<string[]> {
  const { stdout } = await exec("ip", ["netns", "list"]);
  return stdout
    .split("\n")
    .map((l) => l.split(" ")[0] ?? "")
    .filter(Boolean);
}

export async function hostLinks(): Promise<string[]> {
  const { stdout } = await exec("ip", ["-o", "link", "show"]);
  return stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => l.split(":")[1]?.trim() ?? "");
}
