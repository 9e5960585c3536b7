import type { Redis } from "ioredis";
import { redisKeys } from "../redis/redis-keys.ts";
import { redisScripts } from "../redis/redis-scripts.ts";
import { MissingPermission } from "./missing-permission.ts";

/** GitHub's secondary limit on content creation is 80 requests a minute; stay under it. */
export const GITHUB_WRITES_PER_MINUTE = 78;
/**
 * How much later than its grant a write may reach GitHub, which counts its minute by arrival: a
 * twelfth of the minute (5 s). The budget admits GITHUB_WRITES_PER_MINUTE writes per minute and
 * this much more: at a window's edge a full minute's writes are granted at once as the last
 * minute's leave it, and without the margin two such bursts a few milliseconds of latency apart
 * fall into one of GitHub's minutes.
 */
const ARRIVAL_SPREAD_SHARE = 1 / 12;

/**
 * One installation's GitHub write budget. GitHub limits and pauses each installation's token on
 * its own, so one busy (or rate-limited) installation never holds back another's writes.
 */
export interface GitHubWriteBudget {
  /**
   * Waits until one more write fits in the window and no pause is in force, then takes it. Throws
   * MissingPermission at once while a missing permission pauses the installation's writes, unless
   * the write is a reply (which needs another permission and says what to grant).
   */
  acquire(signal?: AbortSignal, options?: { reply?: boolean }): Promise<void>;
  /** Stops every process's writes of this installation for `ms` (retry-after, or the limit is spent). */
  pause(ms: number): Promise<void>;
  /**
   * Pauses the installation's writes (they fail at once) because it lacks `permission`, and keeps
   * it for the next reply; the first process to notice reports it (onMissingPermission).
   */
  blockForPermission(permission: string): Promise<void>;
  /** A permission the next reply should ask for, until `advised` is called. */
  permissionAdvice(): Promise<string | undefined>;
  advised(): Promise<void>;
}

/** How long a missing permission pauses an installation's writes before one is tried again. */
export const MISSING_PERMISSION_PAUSE_MS = 30 * 60_000;

/** The write budget of each installation (made on first use). */
export type GitHubWriteBudgets = (installationId: number) => GitHubWriteBudget;

export function createGitHubWriteBudgets(options: {
  redis: Redis;
  prefix: string;
  perMinute?: number;
  windowMs?: number;
  /** Told once per pause that an installation lacks a permission (to log it and count it). */
  onMissingPermission?: (installationId: number, permission: string) => void;
}): GitHubWriteBudgets {
  const budgets = new Map<number, GitHubWriteBudget>();
  return (installationId) => {
    let budget = budgets.get(installationId);
    if (!budget)
      budgets.set(installationId, (budget = createGitHubWriteBudget({ ...options, installationId })));
    return budget;
  };
}

export function createGitHubWriteBudget(options: {
  redis: Redis;
  prefix: string;
  installationId: number;
  perMinute?: number;
  windowMs?: number;
  onMissingPermission?: (installationId: number, permission: string) => void;
}): GitHubWriteBudget {
  const { redis, prefix, perMinute = GITHUB_WRITES_PER_MINUTE, windowMs = 60_000 } = options;
  const admittingMs = Math.round(windowMs * (1 + ARRIVAL_SPREAD_SHARE));
  const keys = redisKeys(prefix);
  const scripts = redisScripts(redis);
  const windowKey = keys.githubWrites(options.installationId);
  const pauseKey = keys.githubPausedUntil(options.installationId);
  const blockKey = keys.githubMissingPermission(options.installationId);
  const adviceKey = keys.githubPermissionAdvice(options.installationId);
  let sequence = 0;
  return {
    async acquire(signal, { reply = false } = {}) {
      const member = `${process.pid}:${Date.now()}:${sequence++}:${Math.random()}`;
      for (;;) {
        signal?.throwIfAborted();
        const answer = await scripts.githubAcquireWrite(
          windowKey,
          pauseKey,
          blockKey,
          String(admittingMs),
          String(perMinute),
          member,
          reply ? "0" : "1",
        );
        if (typeof answer === "string") throw new MissingPermission(answer);
        const wait = Number(answer);
        if (wait === 0) return;
        await new Promise((resolve) => setTimeout(resolve, Math.min(wait, 5_000)));
      }
    },
    async pause(ms) {
      await scripts.githubPauseWrites(pauseKey, String(Math.max(1, Math.ceil(ms))));
    },
    async blockForPermission(permission) {
      const fresh = await redis.set(blockKey, permission, "PX", MISSING_PERMISSION_PAUSE_MS, "NX");
      if (fresh !== "OK") return;
      await redis.set(adviceKey, permission, "EX", 30 * 24 * 3600);
      options.onMissingPermission?.(options.installationId, permission);
    },
    async permissionAdvice() {
      return (await redis.get(adviceKey)) ?? undefined;
    },
    async advised() {
      await redis.del(adviceKey);
    },
  };
}
