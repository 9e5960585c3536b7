import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, inject, it } from "vitest";
import { createGitHubWriteBudgets } from "../../src/github/github-write-budget.ts";
import { createCheckRunPublisher } from "../../src/github/publish-check-run.ts";
import { createRedisClaims } from "../../src/github/redis-claims.ts";
import { instrumentRunStore } from "../../src/observability/instrument.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { createRunActivity } from "../../src/observability/run-activity.ts";
import { createAbortBus, type AbortBus } from "../../src/queue/abort-bus.ts";
import { createDurablePublisher } from "../../src/queue/durable-publisher.ts";
import { applyAndPublish, type RunDeps } from "../../src/queue/run-deps.ts";
import { createRunQueues, type RunQueues } from "../../src/queue/run-queues.ts";
import { createRunStore } from "../../src/queue/run-store.ts";
import { redisKeys } from "../../src/redis/redis-keys.ts";
import { countRedisRoundTrips, type RedisRoundTrips } from "../helpers/count-redis-round-trips.ts";
import { fakeGitHub, type FakeGitHub } from "../helpers/github-api.ts";
import { testOctokit } from "../helpers/github-octokit.ts";
import { runRecord } from "../helpers/github-run-deps.ts";

/**
 * The run machinery wired as the bot wires it (instrumented store, check-run publisher made
 * durable, one connection for both), with the connection's round trips counted.
 */
let redis: Redis;
let queueConnection: Redis;
let queues: RunQueues;
let abortBus: AbortBus;
let github: FakeGitHub;
let trips: RedisRoundTrips;
let deps: RunDeps;

beforeEach(async () => {
  redis = new Redis(inject("redisUrl"), { maxRetriesPerRequest: null });
  // The queues are used only when a publish fails; their own connection keeps their set-up out of the count.
  queueConnection = new Redis(inject("redisUrl"), { maxRetriesPerRequest: null });
  const prefix = `t-${randomUUID()}`;
  github = fakeGitHub();
  const log = pino({ level: "silent" });
  const store = instrumentRunStore(createRunStore({ redis, prefix }), {
    metrics: createMetrics({ defaultMetrics: false }),
    activity: createRunActivity({ redis, prefix }),
  });
  queues = createRunQueues({ connection: queueConnection, prefix });
  abortBus = await createAbortBus({ redis: queueConnection, prefix });
  const octokit = testOctokit();
  const checkRuns = createCheckRunPublisher({
    store,
    budgets: createGitHubWriteBudgets({ redis, prefix }),
    githubFor: async () => octokit,
    publicUrl: "http://bot.test",
    claimAnnotations: createRedisClaims({ redis, key: redisKeys(prefix).checkRunAnnotated, claimMs: 60_000 }),
    log,
  });
  const durable = createDurablePublisher({ publish: checkRuns, store, queues, log });
  deps = { store, queues, abortBus, publish: durable.publish, log };
  trips = countRedisRoundTrips(redis);
});

afterEach(async () => {
  await queues.close();
  await abortBus.close();
  await queueConnection.quit();
  await redis.quit();
  github.stop();
});

/** A running PR run whose check run exists, published once (scripts loaded, connection warm). */
async function runningRun() {
  const run = runRecord({ state: "running", startedAt: new Date().toISOString() });
  await deps.store.create(run);
  await applyAndPublish(deps, run.id, { type: "progress", progress: { done: 0, total: 10, failed: 0 } });
  return run;
}

describe("a published run state change", () => {
  it("costs at most four Redis round trips (an iteration finished on a running run)", async () => {
    const run = await runningRun();
    const writesBefore = github.checkRunWrites().length;
    trips.reset();

    const changed = await applyAndPublish(deps, run.id, {
      type: "progress",
      progress: { done: 1, total: 10, failed: 0 },
    });

    expect(changed?.progress).toEqual({ done: 1, total: 10, failed: 0 });
    expect(github.checkRunWrites().slice(writesBefore)).toHaveLength(1);
    console.log(`round trips per published change: ${trips.trips.length}`, trips.trips);
    expect(trips.trips.length).toBeLessThanOrEqual(4);
  });
});

describe("two processes publishing one run at once", () => {
  it("leave the check run showing the newest state, however late the older one writes", async () => {
    const run = await runningRun();
    const progressed = await deps.store.apply(run.id, {
      type: "progress",
      progress: { done: 5, total: 10, failed: 0 },
    });
    // Another process concludes the run and publishes it before this one's publish of the progress.
    await applyAndPublish(deps, run.id, { type: "concluded", conclusion: "cancelled", reason: "aborted" });

    await deps.publish(progressed!);

    const checkRun = [...github.latestCheckRuns().values()][0];
    expect(checkRun).toMatchObject({ status: "completed", conclusion: "cancelled" });
  });
});
