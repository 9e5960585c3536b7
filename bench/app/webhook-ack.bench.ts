/**
 * Webhook acknowledgement: the bot's web side against a bare Probot app that does nothing, side by
 * side in one run, each in its own process on loopback, with a private redis-server.
 *
 *   node --import tsx bench/app/webhook-ack.bench.ts [--seconds 10] [--rate 200] [--rounds 3]
 *
 * Per round and server: an open-loop phase at RATE signed deliveries/s (latency measured from each
 * delivery's scheduled send time, so a stall is not hidden) and a closed-loop phase (16 connections
 * back to back) for the most deliveries/s it acknowledges. Medians over the rounds are printed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHmac, randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "node:http";
import { githubAppKey } from "../../test/helpers/github-app-key.ts";
import { freePort } from "../../test/helpers/free-port.ts";
import { startRedis } from "../../test/helpers/start-redis.ts";
import { commentPayload } from "../../test/helpers/github-payloads.ts";

const flag = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const SECONDS = flag("seconds", 10);
const RATE = flag("rate", 200);
const ROUNDS = flag("rounds", 3);
const SATURATION_SECONDS = 5;
const CONNECTIONS = 16;
const SECRET = "bench-secret";

const body = JSON.stringify(commentPayload({ body: "Please run it\n/test network-stress iterations=20" }));
const signature = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;

function deliver(port: number, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/api/github/webhooks",
        agent,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "x-github-event": "issue_comment",
          "x-github-delivery": randomUUID(),
          "x-hub-signature-256": signature,
        },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function openLoop(
  port: number,
): Promise<{ p50: number; p99: number; perSecond: number; errors: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const total = SECONDS * RATE;
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const scheduled = start + (i * 1000) / RATE;
    const wait = scheduled - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(
      deliver(port, agent).then(
        (status) => {
          if (status !== 200) errors += 1;
          latencies.push(performance.now() - scheduled);
        },
        () => void (errors += 1),
      ),
    );
  }
  await Promise.all(pending);
  const elapsed = (performance.now() - start) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { p50: at(0.5), p99: at(0.99), perSecond: (total - errors) / elapsed, errors };
}

async function closedLoop(port: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const deadline = performance.now() + SATURATION_SECONDS * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) if ((await deliver(port, agent)) === 200) done += 1;
    }),
  );
  agent.destroy();
  return done / SATURATION_SECONDS;
}

async function startServer(
  kind: string,
  redisUrl: string,
  keyFile: string,
): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      new URL("./webhook-server.ts", import.meta.url).pathname,
      kind,
      String(port),
      redisUrl,
      keyFile,
      SECRET,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("ready") && resolve());
    child.once("exit", (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
  return { port, child };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const redis = await startRedis();
const keyFile = join(tmpdir(), `netstress-bench-key-${process.pid}.pem`);
await writeFile(keyFile, githubAppKey());
const servers = {
  netstress: await startServer("netstress", redis.url, keyFile),
  bare: await startServer("bare", redis.url, keyFile),
};
const results: Record<
  string,
  { p50: number[]; p99: number[]; perSecond: number[]; saturated: number[]; errors: number }
> = {
  netstress: { p50: [], p99: [], perSecond: [], saturated: [], errors: 0 },
  bare: { p50: [], p99: [], perSecond: [], saturated: [], errors: 0 },
};
try {
  // Warm-up: JIT, connections, Redis scripts.
  for (const { port } of Object.values(servers)) await closedLoop(port);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, { port }] of Object.entries(servers)) {
      const open = await openLoop(port);
      const saturated = await closedLoop(port);
      const r = results[name]!;
      r.p50.push(open.p50);
      r.p99.push(open.p99);
      r.perSecond.push(open.perSecond);
      r.saturated.push(saturated);
      r.errors += open.errors;
      process.stderr.write(
        `round ${round} ${name}: p50 ${open.p50.toFixed(2)} ms, p99 ${open.p99.toFixed(2)} ms, ` +
          `${open.perSecond.toFixed(0)}/s at ${RATE}/s offered, ${saturated.toFixed(0)}/s saturated, ${open.errors} errors\n`,
      );
    }
  }
} finally {
  for (const { child } of Object.values(servers)) child.kill("SIGTERM");
  await redis.stop();
}
const row = (name: string) => {
  const r = results[name]!;
  return `| ${name} | ${median(r.p50).toFixed(2)} | ${median(r.p99).toFixed(2)} | ${median(r.perSecond).toFixed(0)} | ${median(r.saturated).toFixed(0)} | ${r.errors} |`;
};
const ratio = (key: "perSecond" | "saturated") =>
  median(results.netstress![key]) / median(results.bare![key]);
process.stdout.write(
  [
    `medians of ${ROUNDS} rounds; ${SECONDS * RATE} deliveries at ${RATE}/s per round; saturation: ${CONNECTIONS} connections for ${SATURATION_SECONDS} s`,
    "",
    "| server | p50 ms | p99 ms | acknowledged/s at offered rate | saturated/s | non-200 |",
    "| --- | --- | --- | --- | --- | --- |",
    row("netstress"),
    row("bare"),
    "",
    `throughput netstress/bare: ${ratio("perSecond").toFixed(2)} at ${RATE}/s offered, ${ratio("saturated").toFixed(2)} saturated`,
    "",
  ].join("\n"),
);
