import type { Redis } from "ioredis";

/** GitHub's secondary limit on content creation is 80 requests a minute; stay under it. */
export const GITHUB_WRITES_PER_MINUTE = 78;

// Sliding window over the last minute, shared by every bot process through Redis, plus a pause that
// a rate-limited response imposes on everyone. Returns 0 (go) or the milliseconds to wait.
const ACQUIRE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local paused = tonumber(redis.call('GET', KEYS[2]) or '0')
if paused > now then return paused - now end
local window = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + window - now)
`;

const PAUSE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local until_ = now + tonumber(ARGV[1])
if until_ > tonumber(redis.call('GET', KEYS[1]) or '0') then
  redis.call('SET', KEYS[1], until_, 'PX', ARGV[1])
end
return until_
`;

export interface GitHubWriteBudget {
  /** Waits until one more write fits in the window and no pause is in force, then takes it. */
  acquire(signal?: AbortSignal): Promise<void>;
  /** Stops every process's writes for `ms` (GitHub said retry-after, or the rate limit is spent). */
  pause(ms: number): Promise<void>;
}

export function createGitHubWriteBudget(options: {
  redis: Redis;
  prefix: string;
  perMinute?: number;
  windowMs?: number;
}): GitHubWriteBudget {
  const { redis, prefix, perMinute = GITHUB_WRITES_PER_MINUTE, windowMs = 60_000 } = options;
  const windowKey = `${prefix}:github:writes`;
  const pauseKey = `${prefix}:github:paused-until`;
  let sequence = 0;
  return {
    async acquire(signal) {
      const member = `${process.pid}:${Date.now()}:${sequence++}:${Math.random()}`;
      for (;;) {
        signal?.throwIfAborted();
        const wait = Number(
          await redis.eval(
            ACQUIRE_SCRIPT,
            2,
            windowKey,
            pauseKey,
            String(windowMs),
            String(perMinute),
            member,
          ),
        );
        if (wait === 0) return;
        await new Promise((resolve) => setTimeout(resolve, Math.min(wait, 5_000)));
      }
    },
    async pause(ms) {
      await redis.eval(PAUSE_SCRIPT, 1, pauseKey, String(Math.max(1, Math.ceil(ms))));
    },
  };
}
