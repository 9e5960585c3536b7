import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { pino } from "pino";
import { inject } from "vitest";
import { createAbortBus } from "../../src/queue/abort-bus.ts";
import { createGitHubWriteBudget } from "../../src/queue/github-write-budget.ts";
import type { RunDeps } from "../../src/queue/run-deps.ts";
import { createRunQueues } from "../../src/queue/run-queues.ts";
import type { RunRecord } from "../../src/queue/run-record.ts";
import { createRunStore } from "../../src/queue/run-store.ts";
import { fakeGitHub, type FakeGitHub, type FakeGitHubOptions } from "./github-api.ts";
import { testOctokit } from "./github-octokit.ts";
import { HEAD_SHA, INSTALLATION_ID } from "./github-payloads.ts";

/** The run machinery on the test Redis (fresh prefix) with GitHub faked at the HTTP boundary. */
export async function testRunDeps(options: { github?: FakeGitHubOptions } = {}): Promise<{
  deps: RunDeps;
  github: FakeGitHub;
  redis: Redis;
  prefix: string;
  close(): Promise<void>;
}> {
  const redis = new Redis(inject("redisUrl"), { maxRetriesPerRequest: null });
  const prefix = `t-${randomUUID()}`;
  const github = fakeGitHub(options.github);
  const queues = createRunQueues({ connection: redis, prefix });
  const abortBus = await createAbortBus({ redis, prefix });
  const octokit = testOctokit();
  const deps: RunDeps = {
    store: createRunStore({ redis, prefix }),
    queues,
    budget: createGitHubWriteBudget({ redis, prefix }),
    abortBus,
    publicUrl: "http://bot.test",
    githubFor: async () => octokit,
    log: pino({ level: "silent" }),
  };
  return {
    deps,
    github,
    redis,
    prefix,
    async close() {
      await queues.close();
      await abortBus.close();
      await redis.quit();
      github.stop();
    },
  };
}

/** A queued run record as the intake makes it. */
export function runRecord(overrides: Partial<RunRecord> = {}): RunRecord {
  const now = new Date().toISOString();
  return {
    id: randomUUID().replace(/-/g, ""),
    requestId: "delivery/slot",
    installationId: INSTALLATION_ID,
    owner: "openshift",
    repo: "ovn-kubernetes",
    pr: 7,
    headSha: HEAD_SHA,
    arch: "amd64",
    options: { iterations: 5, baseline: "payload" },
    source: { tags: ["ovn-kubernetes"], parallel: 2, timeoutMinutes: 60, imageWaitMinutes: 30 },
    trigger: { kind: "comment", actor: "alice", deliveryId: "delivery" },
    dedupeKey: randomUUID(),
    firstIteration: 0,
    shards: [],
    state: "queued",
    revision: 0,
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
}
