import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import {
  RUN_POWER_SEED,
  runDesignPower,
  type RunDesign,
  type RunPower,
} from "../analysis/run-design-power.ts";
import { MAX_CLUSTERS_PER_ARM } from "../config/cluster-count.ts";
import { redisKeys } from "../redis/redis-keys.ts";
import { runPowerSchema } from "../runs/run-record.ts";

/** What a run's design can see at a target: the resolve stage asks, once per run. */
export type PlanRunPower = (input: {
  design: RunDesign;
  target: { from: number; to: number };
}) => Promise<RunPower>;

/** A design's answer stays the same while the planner does (seeded); kept a month past its last use. */
const CACHE_SECONDS = 30 * 24 * 3600;

/**
 * The power planner as the workers use it: `runDesignPower` (a seeded simulation, tens of
 * milliseconds of CPU) once per design and target, cached in Redis, so that runs of the same
 * repository configuration share one answer. Logs what each simulation cost.
 */
export function createPowerPlanner({
  redis,
  prefix,
  log,
  plan = runDesignPower,
}: {
  redis: Redis;
  prefix: string;
  log: Logger;
  plan?: typeof runDesignPower;
}): PlanRunPower {
  const keys = redisKeys(prefix);
  return async ({ design, target }) => {
    const input = { design, target, maxClustersPerArm: MAX_CLUSTERS_PER_ARM };
    const digest = createHash("sha256")
      .update(JSON.stringify({ ...input, seed: RUN_POWER_SEED }))
      .digest("hex")
      .slice(0, 32);
    const key = keys.powerPlan(digest);
    const cached = await redis.get(key);
    const parsed = cached === null ? undefined : runPowerSchema.safeParse(JSON.parse(cached));
    if (parsed?.success) {
      await redis.expire(key, CACHE_SECONDS);
      return parsed.data;
    }
    const started = performance.now();
    const power = plan(input);
    log.info(
      { design, target, ms: Math.round(performance.now() - started) },
      "planned what a run design can see",
    );
    await redis.set(key, JSON.stringify(power), "EX", CACHE_SECONDS);
    return power;
  };
}
