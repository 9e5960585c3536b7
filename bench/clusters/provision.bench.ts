/**
 * 200 clusters under test provisioned and given back through the simulated Hive: 100 requests of
 * 2 clusters at once, half for a PR payload (ClusterDeployments), half for the released payload a
 * pool serves (ClusterClaims). Prints one JSON line: wall time, API calls per cluster (hub and the
 * clusters' own), the time clusters sat ready but idle before their request's iteration began, the
 * provider's peak RSS and heap, leaks and twins.
 *
 *   bash bench/clusters/run.sh        (npm run bench:clusters)
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Redis } from "ioredis";
import { startRedis } from "../../test/helpers/start-redis.ts";
import { acquireArm, hiveProvider, PR, RELEASED, request } from "../../test/clusters/hive-fixture.ts";

const REQUESTS = 100;
const PER_REQUEST = 2;
const HOLD_MS = Number(process.env.HOLD_MS ?? 2000);

// Run from the repository root (run.sh does): the Hive side runs through tsx, uncompiled.
const hiveProcess = spawn(
  process.execPath,
  ["--import", "tsx", join(process.cwd(), "bench/clusters/hive-process.ts")],
  {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, POOL_SIZE: String(REQUESTS / 2) },
  },
);
const lines = createInterface({ input: hiveProcess.stdout! })[Symbol.asyncIterator]();
const { hubKubeconfig } = JSON.parse((await lines.next()).value as string) as { hubKubeconfig: string };
const server = await startRedis();
const redis = new Redis(server.url);
const calls = { hub: new Map<string, number>(), clusters: 0 };
/**
 * When each cluster was ready, by id: the source's last step before it hands a cluster out is its
 * ClusterVersion read, the first call to the cluster's own API (counted from its start, so a
 * cluster's idle time below includes that read).
 */
const readyAt = new Map<string, number>();
/** Per cluster: ms from ready to the start of its request's iteration (here the hold). */
const idleMs: number[] = [];
/** Per request: the idle ms of its last cluster ready (its read and the handout, no sibling to wait for). */
const lastIdleMs: number[] = [];
let peakRss = 0;
let peakHeap = 0;
const sample = () => {
  const { rss, heapUsed } = process.memoryUsage();
  peakRss = Math.max(peakRss, rss);
  peakHeap = Math.max(peakHeap, heapUsed);
};
const sampler = setInterval(sample, 20);
const clusters = hiveProvider({
  hubKubeconfig,
  redis,
  prefix: "bench",
  maxClusters: REQUESTS * PER_REQUEST,
  readySeconds: 600,
  timeoutMs: 30_000,
  // The production defaults but a faster hub poll (10 s), so that the run takes a minute, not ten.
  timing: { pollMs: 2000, healthPollMs: 30_000, lostAfterFailures: 3 },
  onCall: (api, call) => {
    if (api.endsWith(" hub")) calls.hub.set(call, (calls.hub.get(call) ?? 0) + 1);
    else {
      calls.clusters += 1;
      if (!readyAt.has(api)) readyAt.set(api, performance.now());
    }
  },
});
// The pool fills first, as it would be on a hub that has been up for a while.
await new Promise((resolve) => setTimeout(resolve, 5000));
sample();
const rssBefore = peakRss;
const started = performance.now();
let allReadyAt = 0;
await Promise.all(
  Array.from({ length: REQUESTS }, async (_, i) => {
    const pooled = i % 2 === 1;
    const leases = await acquireArm(
      clusters,
      request({
        runId: `bench-${i}`,
        arm: pooled ? "baseline" : "pr",
        arch: pooled ? "amd64" : "arm64",
        payload: pooled ? RELEASED : PR,
        count: PER_REQUEST,
      }),
    );
    const iterationStarts = performance.now();
    allReadyAt = Math.max(allReadyAt, iterationStarts);
    // No farm here: the iteration starts the moment the request has its clusters.
    const idle = leases.map((lease) => iterationStarts - readyAt.get(lease.cluster.id)!);
    idleMs.push(...idle);
    lastIdleMs.push(Math.min(...idle));
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    await Promise.all(leases.map((l) => l.release()));
  }),
);
// The quota comes back once Hive has removed the objects (its finalizers), a poll after the deletes.
const leaseKeys = () => redis.keys("bench:clusters:leases:*");
for (let waited = 0; (await leaseKeys()).length > 0 && waited < 30_000; waited += 200)
  await new Promise((resolve) => setTimeout(resolve, 200));
const seconds = (performance.now() - started) / 1000;
clearInterval(sampler);
clusters.stop();
const leftKeys = (await leaseKeys()).length;
hiveProcess.stdin!.end();
const hiveStats = JSON.parse((await lines.next()).value as string) as Record<string, unknown>;
const total = REQUESTS * PER_REQUEST;
const hubCalls = [...calls.hub.values()].reduce((a, b) => a + b, 0);
console.log(
  JSON.stringify({
    clusters: total,
    readySeconds: Number(((allReadyAt - started) / 1000).toFixed(1)),
    allGivenBackSeconds: Number(seconds.toFixed(1)),
    hubCallsPerCluster: Number((hubCalls / total).toFixed(2)),
    clusterCallsPerCluster: Number((calls.clusters / total).toFixed(2)),
    idleBeforeIteration: {
      clusterSeconds: Number((idleMs.reduce((a, b) => a + b, 0) / 1000).toFixed(1)),
      meanSeconds: Number((idleMs.reduce((a, b) => a + b, 0) / idleMs.length / 1000).toFixed(2)),
      maxSeconds: Number((Math.max(...idleMs) / 1000).toFixed(2)),
      lastOfRequestMeanSeconds: Number(
        (lastIdleMs.reduce((a, b) => a + b, 0) / lastIdleMs.length / 1000).toFixed(2),
      ),
    },
    hubCalls: Object.fromEntries(calls.hub),
    peakRssMB: Math.round(peakRss / 2 ** 20),
    rssBeforeMB: Math.round(rssBefore / 2 ** 20),
    peakHeapMB: Math.round(peakHeap / 2 ** 20),
    leftLeaseKeys: leftKeys,
    hive: hiveStats,
  }),
);
redis.disconnect();
await server.stop();
