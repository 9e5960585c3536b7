import { DEFAULT_QUOTAS } from "../../src/config/bot-settings.ts";
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import type { IntakeDeps } from "../../src/app/intake-deps.ts";
import { createGitHubWriteBudgets, type GitHubWriteBudgets } from "../../src/github/github-write-budget.ts";
import { createCheckRunPublisher } from "../../src/github/publish-check-run.ts";
import { createRedisClaims } from "../../src/github/redis-claims.ts";
import { redisKeys } from "../../src/redis/redis-keys.ts";
import { pino } from "pino";
import type { PrRun } from "../../src/runs/run-record.ts";
import { fakeGitHub, type FakeGitHub, type FakeGitHubOptions } from "./github-api.ts";
import { testOctokit } from "./github-octokit.ts";
import { HEAD_SHA, INSTALLATION_ID } from "./github-payloads.ts";
import { runMachinery } from "./run-machinery.ts";
import { DEFAULT_REGISTRY_SETTINGS } from "../../src/config/registry-settings.ts";

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
  const github = fakeGitHub(options.github);
  const octokit = testOctokit();
  const githubFor = async () => octokit;
  const publicUrl = "http://bot.test";
  let budgets: GitHubWriteBudgets | undefined;
  const machinery = await runMachinery(({ store, redis, prefix }) => {
    budgets = createGitHubWriteBudgets({ redis, prefix });
    return createCheckRunPublisher({
      store,
      budgets,
      githubFor,
      publicUrl,
      claimAnnotations: createRedisClaims({
        redis,
        key: redisKeys(prefix).checkRunAnnotated,
        claimMs: 60_000,
      }),
      log: pino({ level: "silent" }),
    });
  });
  const deps: IntakeDeps = {
    ...machinery.runs,
    budgets: budgets!,
    githubFor,
    publicUrl,
    runIdSecret: "test-run-id-key",
    trustedApps: [],
    defaults: { tags: [] },
    quotas: DEFAULT_QUOTAS,
    releases: DEFAULT_REGISTRY_SETTINGS.releases,
  };
  return {
    deps,
    github,
    redis: machinery.redis,
    prefix: machinery.prefix,
    async close() {
      await machinery.close();
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
