/**
 * The web tier under the two loads of the public port that used to take it down:
 *  1. 20 concurrent GET /streams/<s>/<arch> (kept up for 10 s) over a history of 1,000 broken tests
 *     × 30 payloads, while /healthz is asked every 20 ms: /healthz latency p50/p99/max;
 *  2. 60 concurrent downloads of one 16 MiB artifact, read slowly: peak RSS of this process.
 * Starts its own redis-server on loopback.
 *
 *   node --import tsx bench/web/web-tier.bench.ts
 */
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { createHistoryStore } from "../../src/history/history-store.ts";
import { sendArtifact } from "../../src/http/send-artifact.ts";
import { createStoredTrendViews } from "../../src/trends/stored-trend-views.ts";
import { createTrendRoutes } from "../../src/trends/trend-routes.ts";
import { startRedis } from "../../test/helpers/start-redis.ts";

const server = await startRedis();
const redis = new Redis(server.url);
const dir = await mkdtemp(join(tmpdir(), "web-tier-bench-"));
const prefix = "web-tier-bench";
const history = createHistoryStore({ redis, prefix });
const STREAM = "4.22.0-0.nightly";
for (let index = 0; index < 30; index++)
  await history.record({
    stream: STREAM,
    arch: "amd64",
    runId: `run-${index}`,
    payload: { pullspec: `registry.test/ocp/release@sha256:${index.toString(16).padStart(64, "0")}` },
    tests: Array.from({ length: 1000 }, (_, t) => ({
      name: `[sig-network] broken test ${t}`,
      runs: 10,
      passes: index >= 3 + (t % 25) ? 6 : 10,
    })),
  });
const routes = createTrendRoutes({
  views: createStoredTrendViews({
    history,
    changesBetween: async () => new Error("not read in this bench"),
    redis,
    prefix,
  }),
});
const root = join(dir, "artifacts");
await mkdir(root);
await writeFile(join(root, "big.bin"), randomBytes(16 * 1024 * 1024));
const http = createServer((req, res) => {
  if (req.url === "/healthz") return void res.writeHead(200).end("ok\n");
  if (req.url?.startsWith("/artifacts/"))
    return void sendArtifact(res, { root, file: join(root, req.url.slice("/artifacts/".length)) });
  void Promise.resolve(routes(req, res)).then((handled) => handled || res.writeHead(404).end());
});
await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

function get(path: string, slow = false): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    request(`${base}${path}`, (res) => {
      let bytes = 0;
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
        if (slow) {
          res.pause();
          setTimeout(() => res.resume(), 5);
        }
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, bytes }));
    })
      .on("error", reject)
      .end();
  });
}

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.ceil((p / 100) * values.length) - 1]!;

// 1. Trend pages and /healthz.
const latencies: number[] = [];
const statuses = new Map<number, number>();
const until = Date.now() + 10_000;
const pages = Array.from({ length: 20 }, async () => {
  while (Date.now() < until) {
    const { status } = await get(`/streams/${STREAM}/amd64`);
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  }
});
const health = (async () => {
  while (Date.now() < until) {
    const started = performance.now();
    await get("/healthz");
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
})();
await Promise.all([...pages, health]);
console.log(
  `trend pages: ${[...statuses].map(([s, n]) => `${n}× ${s}`).join(", ")}; /healthz over ${latencies.length} requests: ` +
    `p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`,
);

// 2. Downloads.
let peak = process.memoryUsage().rss;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
const before = process.memoryUsage().rss;
const downloads = await Promise.all(Array.from({ length: 60 }, () => get("/artifacts/big.bin", true)));
clearInterval(sampler);
const served = downloads.filter((d) => d.status === 200);
console.log(
  `downloads: ${served.length}× 200 (${served.every((d) => d.bytes === 16 * 1024 * 1024) ? "all whole" : "CUT"}), ` +
    `${downloads.length - served.length}× 503; RSS before ${(before / 2 ** 20).toFixed(0)} MiB, peak ${(peak / 2 ** 20).toFixed(0)} MiB`,
);

http.close();
await redis.quit();
await server.stop();
await rm(dir, { recursive: true, force: true });
