// `node --import tsx bench/ext/probe-cost.bench.ts [nodes] [podsPerNode] [seconds] [binary]`: what one
// probe pod costs (CPU, memory) in a cluster of `nodes` nodes (default 20):
//  - a client probe pod's checker with a 20-node cluster's targets (same node, every other node,
//    the Service, its host, the API server; new and reused connections);
//  - the same checker with `podsPerNode` (default 30) targets on every node: 20 × 30 pods' worth of paths;
//  - a server probe pod answering the probes of every other node's client.
// The measured process is `netstress ext probe-server` (from the sources, or `binary`, e.g. the
// standalone build); the other side runs in this process. CPU from /proc/<pid>/stat, memory VmRSS.
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { createHttpCheck } from "@netstress/network-extension/http-check.ts";
import type { ProbeTargetInput } from "@netstress/network-extension/probe-target.ts";
import { probeTargetsSchema } from "@netstress/network-extension/probe-target.ts";
import { runChecker } from "@netstress/network-extension/run-checker.ts";
import { startProbeServer } from "@netstress/network-extension/start-probe-server.ts";

const [nodes = 20, podsPerNode = 30, seconds = 30] = process.argv.slice(2, 5).map(Number);
const binary = process.argv[5];
const CLI = fileURLToPath(new URL("../../bin/netstress.js", import.meta.url));
const TICKS = 100; // USER_HZ

async function sample(pid: number) {
  const stat = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]!.split(" ");
  const cpu = (Number(stat[11]) + Number(stat[12])) / TICKS;
  const rss = Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
  return { cpu, rss };
}

function start(args: string[]) {
  const argv = binary ? [binary, ...args] : [process.execPath, CLI, "ext", ...args];
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d));
  return { child, output: () => out };
}

async function measure(name: string, pid: number, changes: () => number) {
  await new Promise((r) => setTimeout(r, 5000)); // start-up and first probes
  const before = await sample(pid);
  const t0 = Date.now();
  let peak = before.rss;
  const startChanges = changes();
  while (Date.now() - t0 < seconds * 1000) {
    await new Promise((r) => setTimeout(r, 1000));
    peak = Math.max(peak, (await sample(pid)).rss);
  }
  const after = await sample(pid);
  const wall = (Date.now() - t0) / 1000;
  console.log(
    `${name}: CPU ${(((after.cpu - before.cpu) / wall) * 1000).toFixed(0)} millicores, RSS ${after.rss.toFixed(0)} MiB (peak ${peak.toFixed(0)}), state changes ${changes() - startChanges}`,
  );
}

const servers = await Promise.all(
  Array.from({ length: 24 }, (_, i) => startProbeServer({ port: 0, host: "127.0.0.1", name: `srv-${i}` })),
);
const port = (i: number) => servers[i % servers.length]!.port;
const clientTargets = (perNode: number): ProbeTargetInput[] =>
  (["new", "reused"] as const).flatMap((connection) => [
    { path: "pod-to-pod-same-node", connection, name: "same", host: "127.0.0.1", port: port(0) },
    ...Array.from({ length: (nodes - 1) * perNode }, (_, i) => ({
      path: "pod-to-pod-cross-node" as const,
      connection,
      name: `pod-${i}`,
      host: "127.0.0.1",
      port: port(i + 1),
    })),
    { path: "pod-to-service", connection, name: "service", host: "127.0.0.1", port: port(21) },
    { path: "pod-to-host", connection, name: "host", host: "127.0.0.1", port: port(22) },
    { path: "pod-to-apiserver", connection, name: "apiserver", host: "127.0.0.1", port: port(23) },
  ]);
for (const [label, perNode] of [
  [`client pod, ${nodes} nodes`, 1],
  [`client pod, ${nodes} nodes × ${podsPerNode} pods`, podsPerNode],
] as const) {
  const targets = clientTargets(perNode);
  const { child, output } = start([
    "probe-server",
    "--port",
    "0",
    "--name",
    "client",
    "--targets",
    JSON.stringify(targets),
  ]);
  await measure(
    `${label} (${targets.length} targets/s)`,
    child.pid!,
    () => output().split('"event":"state"').length - 1,
  );
  child.kill("SIGTERM");
  await new Promise((r) => child.on("close", r));
}
{
  const { child, output } = start(["probe-server", "--port", "18480", "--name", "server"]);
  while (!output().includes("listening")) await new Promise((r) => setTimeout(r, 100));
  const controller = new AbortController();
  const check = createHttpCheck({ env: {} });
  // Every other node's client probes this server over a new and a reused connection each second.
  const targets = probeTargetsSchema.parse(
    Array.from({ length: nodes - 1 }, (_, i) =>
      (["new", "reused"] as const).map((connection) => ({
        path: "pod-to-pod-cross-node",
        connection,
        name: `from-${i}`,
        host: "127.0.0.1",
        port: 18480,
      })),
    ).flat(),
  );
  const clients = Array.from({ length: nodes - 1 }, (_, i) =>
    runChecker({
      targets: targets.filter((t) => t.name === `from-${i}`),
      source: `client-${i}`,
      intervalMs: 1000,
      timeoutMs: 2000,
      check,
      emit: () => undefined,
      signal: controller.signal,
    }),
  );
  await measure(
    `server pod, probed by ${nodes - 1} clients (${targets.length} probes/s)`,
    child.pid!,
    () => 0,
  );
  controller.abort();
  await Promise.all(clients);
  check.close();
  child.kill("SIGTERM");
  await new Promise((r) => child.on("close", r));
}
await Promise.all(servers.map((s) => s.close()));
