import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { pino } from "pino";
import { inject } from "vitest";
import type { IntakeDeps } from "../../src/app/intake-deps.ts";
import { createGitHubWriteBudget } from "../../src/github/github-write-budget.ts";
import { createCheckRunPublisher } from "../../src/github/publish-check-run.ts";
import { createAbortBus } from "../../src/queue/abort-bus.ts";
import { createRunQueues } from "../../src/queue/run-queues.ts";
import { createRunStore } from "../../src/queue/run-store.ts";
import type { PrRun } from "../../src/runs/run-record.ts";
import { fakeGitHub, type FakeGitHub, type FakeGitHubOptions } from "./github-api.ts";
import { testOctokit } from "./github-octokit.ts";
import { HEAD_SHA, INSTALLATION_ID } from "./github-payloads.ts";

/**
 * The run machinery on the test Redis (fresh prefix) with GitHub faked at the HTTP boundary: PR runs
 * are published as check runs.
 */
export async function testRunDeps(options: { github?: FakeGitHubOptions } = {}): Promise<{
  deps: IntakeDeps;
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
  const store = createRunStore({ redis, prefix });
  const budget = createGitHubWriteBudget({ redis, prefix });
  const githubFor = async () => octokit;
  const publicUrl = "http://bot.test";
  const deps: IntakeDeps = {
    store,
    queues,
    abortBus,
    publish: createCheckRunPublisher({ store, budget, githubFor, publicUrl }),
    log: pino({ level: "silent" }),
    budget,
    githubFor,
    publicUrl,
    runIdSecret: "test-run-id-key",
    trustedApps: [],
    defaults: { tags: [] },
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

/** A queued PR run record as the intake makes it; `subject` overrides parts of the PR subject. */
export function runRecord(
  overrides: Partial<Omit<PrRun, "subject">> & { subject?: Partial<PrRun["subject"]> } = {},
): PrRun {
  const now = new Date().toISOString();
  const { subject, ...rest } = overrides;
  return {
    id: randomUUID().replace(/-/g, ""),
    subject: {
      kind: "pr",
      requestId: "delivery/slot",
      installationId: INSTALLATION_ID,
      owner: "openshift",
      repo: "ovn-kubernetes",
      pr: 7,
      headSha: HEAD_SHA,
      trigger: { kind: "comment", actor: "alice", deliveryId: "delivery" },
      ...subject,
    },
    arch: "amd64",
    options: { iterations: 5, baseline: "payload" },
    source: { tags: ["ovn-kubernetes"], parallel: 2, timeoutMinutes: 60, imageWaitMinutes: 30 },
    dedupeKey: randomUUID(),
    firstIteration: 0,
    results: [],
    state: "queued",
    revision: 0,
    createdAt: now,
    updatedAt: now,
    ...rest,
  };
}
