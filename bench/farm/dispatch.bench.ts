// Dispatch benchmark: 50 concurrent stress requests × 2 arches × 10 iterations = 1,000 shards (one
// Job each) through the real farm executor and client against fake Kubernetes APIs (bench/farm/
// fake-farm.ts, another process). Prints one JSON line: dispatch time, API calls per shard, the
// bot's peak RSS. Run through bench/farm/run.sh, which compiles it.
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Redis } from "ioredis";
import { pino } from "pino";
import { createFarmExecutor } from "../../src/farm/farm-executor.ts";
import { farmConfigSchema } from "../../src/farm/farm-config.ts";
import { createKubeClient } from "@netstress/core/kube/kube-client.ts";
import type { Shard } from "../../src/runs/shard-executor.ts";
import { DEFAULT_TEST_BINARY_REGISTRY } from "../../src/payload/test-binary-registry.ts";
import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import { startRedis } from "../../test/helpers/start-redis.ts";

const REQUESTS = 50;
const ARCHES = ["amd64", "arm64"] as const;
const ITERATIONS = 10;
const SHARDS = REQUESTS * ARCHES.length * ITERATIONS;
const podSeconds = process.argv[2] ?? "3";
const RUNNER = `registry.bench/netstress/runner@sha256:${"c".repeat(64)}`;
const digest = (c: string) => `sha256:${c.repeat(64)}`;
const COMPONENTS = [
  `registry.bench/pr/ovn-kubernetes@${digest("a")}`,
  `registry.bench/ocp/release@${digest("b")}`,
];

const redis = await startRedis();
const work = await mkdtemp(join(tmpdir(), "farm-bench-"));
const clusterSpecs = ARCHES.flatMap((arch) => [1, 2].map((n) => ({ name: `${arch}-${n}`, arch })));
const farm = spawn(
  process.execPath,
  [
    "--import",
    "tsx",
    "bench/farm/fake-farm.ts",
    JSON.stringify(clusterSpecs),
    JSON.stringify({ runner: RUNNER, components: COMPONENTS }),
    podSeconds,
  ],
  { stdio: ["pipe", "pipe", "inherit"] },
);
const farmLines = createInterface({ input: farm.stdout! })[Symbol.asyncIterator]();
const nextLine = async () => JSON.parse((await farmLines.next()).value as string) as unknown;
const clusters = (await nextLine()) as { name: string; arch: (typeof ARCHES)[number]; kubeconfig: string }[];

const config = farmConfigSchema.parse({
  runner: { image: RUNNER },
  clusters: clusters.map((c) => ({
    name: c.name,
    kubeconfig: c.kubeconfig,
    namespace: "netstress",
    arches: [c.arch],
    // Room for every shard at once: the benchmark measures dispatch, not queueing for capacity.
    capacity: 300,
  })),
});
const created: number[] = [];
const connection = new Redis(redis.url);
const executor = createFarmExecutor({
  config: () => config,
  testBinaries: DEFAULT_TEST_BINARY_REGISTRY,
  redis: connection,
  prefix: "bench",
  logger: pino({ level: "warn" }),
  streamSecret: "bench-stream-secret",
  createClient: (cluster) => {
    const client = createKubeClient({ cluster, timeoutMs: 30_000 });
    return {
      ...client,
      createJob: async (job) => {
        const result = await client.createJob(job);
        created.push(performance.now());
        return result;
      },
    };
  },
});

const plan = (arch: (typeof ARCHES)[number]): ExecutionPlan => ({
  arch,
  arms: [
    {
      arm: "pr",
      components: [
        {
          component: "ovn-kubernetes",
          binary: "/b/pr.gz",
          source: "override",
          image: "registry.bench/pr/ovn-kubernetes:pr1",
          digest: digest("a"),
        },
      ],
    },
    {
      arm: "baseline",
      components: [
        {
          component: "ovn-kubernetes",
          binary: "/b/rel.gz",
          source: "released",
          image: `registry.bench/ocp/release@${digest("b")}`,
          digest: digest("b"),
        },
      ],
    },
  ],
});
const shards: Shard[] = Array.from({ length: REQUESTS }, (_, r) =>
  ARCHES.map((arch) => ({
    runId: `bench-run-${r}-${arch}`.padEnd(32, "0"),
    id: `${arch}-0-${ITERATIONS - 1}`,
    arch,
    arms: ["pr", "baseline"] as ("pr" | "baseline")[],
    iterations: { first: 0, count: ITERATIONS },
    plan: plan(arch),
    seed: `seed${r}`,
    parallel: 4,
    testTimeoutMs: 600_000,
    retries: 1,
  })),
).flat();

const round = (n: number) => Math.round(n * 100) / 100;
let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
// The watches list once per cluster before the first dispatch; that is start-up, not dispatch.
await Promise.all(config.clusters.map((c) => executor.runtimeFor(c).ready));
const baselineRss = process.memoryUsage().rss;
const started = performance.now();
const outcomes = await Promise.all(
  shards.map((shard) =>
    executor.execute({ shard, outDir: join(work, shard.runId), signal: new AbortController().signal }),
  ),
);
const finished = performance.now();
clearInterval(sampler);
farm.stdin!.write("stats\n");
const stats = (await nextLine()) as {
  calls: Record<string, number>;
  watches: number;
  jobsCreated: number;
  twins: number;
};
farm.stdin!.write("stop\n");

const completed = outcomes.filter((o) => o.status === "completed").length;
const sorted = [...created].sort((a, b) => a - b);
// Every call the fake APIs answered, the watches' initial lists included (8 in all): a call a
// dispatch adds (its Secret, a read) counts without this list having to know it.
const perShard = Object.values(stats.calls).reduce((sum, n) => sum + n, 0) / SHARDS;
process.stdout.write(
  `${JSON.stringify({
    dispatchSeconds: round((sorted[SHARDS - 1]! - started) / 1000),
    apiCallsPerShard: round(perShard),
    peakRssMB: Math.round(peakRss / 2 ** 20),
    rssBeforeDispatchMB: Math.round(baselineRss / 2 ** 20),
    allDoneSeconds: round((finished - started) / 1000),
    shards: SHARDS,
    completedShards: completed * ITERATIONS,
    jobsCreated: stats.jobsCreated,
    twins: stats.twins,
    watchConnections: stats.watches,
    calls: stats.calls,
  })}\n`,
);
executor.stop();
await connection.quit();
await redis.stop();
await rm(work, { recursive: true, force: true });
