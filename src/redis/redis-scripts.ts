import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";

type Arg = string | number | Buffer;

/**
 * The bot's Lua scripts (src/redis/lua/*.lua), each with its number of keys; undefined: the caller
 * passes the count first (the lease scripts take one key pair per cluster).
 */
const SCRIPTS = {
  saveRun: { file: "save-run.lua", keys: undefined },
  markPublished: { file: "mark-published.lua", keys: 2 },
  createGate: { file: "create-gate.lua", keys: undefined },
  historyInternNames: { file: "history-intern-names.lua", keys: 1 },
  historyRecordPayload: { file: "history-record-payload.lua", keys: 4 },
  githubAcquireWrite: { file: "github-acquire-write.lua", keys: 3 },
  githubPauseWrites: { file: "github-pause-writes.lua", keys: 1 },
  leaseAcquire: { file: "lease-acquire.lua", keys: undefined },
  leaseLoads: { file: "lease-loads.lua", keys: undefined },
  leaseRenew: { file: "lease-renew.lua", keys: undefined },
  releaseLock: { file: "release-lock.lua", keys: 1 },
  clusterLeaseAcquire: { file: "cluster-lease-acquire.lua", keys: 2 },
  clusterLeaseRenew: { file: "cluster-lease-renew.lua", keys: undefined },
  clusterQuotaReserve: { file: "cluster-quota-reserve.lua", keys: 4 },
} as const;
export type ScriptName = keyof typeof SCRIPTS;

/** Read once per process; scripts are sent by SHA (EVALSHA) once Redis knows them. */
const SOURCES = new Map(
  Object.entries(SCRIPTS).map(([name, { file }]) => [
    name,
    readFileSync(new URL(`./lua/${file}`, import.meta.url), "utf8"),
  ]),
);

export type RedisScripts = Record<ScriptName, (...args: Arg[]) => Promise<unknown>>;

/**
 * The scripts as commands of one connection (ioredis defineCommand: registered once per
 * connection, EVALSHA with a fallback to EVAL after a Redis restart).
 */
export function redisScripts(redis: Redis): RedisScripts {
  const commands = redis as unknown as Record<string, (...args: Arg[]) => Promise<unknown>>;
  const scripts = {} as RedisScripts;
  for (const [name, { keys }] of Object.entries(SCRIPTS) as [ScriptName, (typeof SCRIPTS)[ScriptName]][]) {
    if (typeof commands[name] !== "function") {
      redis.defineCommand(name, {
        lua: SOURCES.get(name)!,
        ...(keys !== undefined ? { numberOfKeys: keys } : {}),
      });
    }
    scripts[name] = (...args) => commands[name]!.call(redis, ...args);
  }
  return scripts;
}
