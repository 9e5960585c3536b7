import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { z } from "zod";
import { archSchema, type Arch } from "@netstress/core/arch/arch.ts";
import { RUN_TTL_SECONDS } from "../queue/run-store.ts";
import { redisKeys } from "../redis/redis-keys.ts";
import { redisScripts } from "../redis/redis-scripts.ts";
import type { GateRun } from "../runs/run-record.ts";

/**
 * What a gate was asked and against what it compares; fixed at creation. Its state is that of its
 * runs, one per arch (see gateRunId): a gate is a thin record over them.
 */
export const storedGateSchema = z.object({
  id: z.string(),
  payload: z.string(),
  baselinePayload: z.string(),
  baselineSource: z.enum(["request", "release-controller"]),
  baselineRelease: z.string().optional(),
  stream: z.string(),
  iterations: z.number().int().positive(),
  arches: z.array(archSchema).min(1),
  /** Build-farm capabilities every run needs beyond its arch; absent: none. */
  capabilities: z.array(z.string()).optional(),
  /** Clusters under test per arm, when the request said. */
  clusters: z.number().int().positive().optional(),
  createdAt: z.string(),
  /** Identical requests share it; while the gate is active, they get this gate. */
  requestKey: z.string(),
});
export type StoredGate = z.infer<typeof storedGateSchema>;

export interface GateStore {
  /**
   * Stores a new gate and its runs (one per arch, gateRunRecord) unless an active gate has the same
   * request key, in one atomic step: of any number of concurrent identical requests exactly one
   * creates, and no reader, nor a process stopping at any point, leaves a gate without all of its
   * runs. `created` false: `id` is the existing gate, and nothing was written.
   */
  createOrJoin(gate: StoredGate, runs: readonly GateRun[]): Promise<{ id: string; created: boolean }>;
  get(id: string): Promise<StoredGate | undefined>;
  /** Once every run of the gate completed: identical requests start a new gate. */
  release(gate: StoredGate): Promise<void>;
}

/** How long a gate stays readable. */
const GATE_TTL_SECONDS = 90 * 24 * 3600;

/**
 * Identical requests: the same candidate, baseline, stream, arches and capabilities (in any order),
 * iterations and clusters per arm.
 */
export function gateRequestKey(input: {
  payload: string;
  baselinePayload: string;
  stream: string;
  arches: readonly Arch[];
  iterations: number;
  capabilities?: readonly string[];
  clusters?: number;
}): string {
  const arches = [...input.arches].sort();
  const identity: unknown[] = [input.payload, input.baselinePayload, input.stream, arches, input.iterations];
  const capabilities = [...new Set(input.capabilities)].sort();
  // Without capabilities, the key stays what it was before gates could require them.
  if (capabilities.length > 0) identity.push(capabilities);
  if (input.clusters !== undefined) identity.push({ clusters: input.clusters });
  return createHash("sha256").update(JSON.stringify(identity)).digest("hex");
}

/** The run of one arch of a gate: derived, so a gate finds its runs without storing their ids. */
export function gateRunId(gateId: string, arch: Arch): string {
  return createHash("sha256").update(`gate\0${gateId}\0${arch}`).digest("hex").slice(0, 32);
}

export function createGateStore(options: {
  redis: Redis;
  prefix: string;
  activeTtlSeconds?: number;
}): GateStore {
  const { redis, prefix, activeTtlSeconds = 24 * 3600 } = options;
  const keys = redisKeys(prefix);
  const scripts = redisScripts(redis);
  return {
    async createOrJoin(gate, runs) {
      // A run is stored as the run store stores it: its record, and its dedupe key held while active.
      const id = (await scripts.createGate(
        2 + 2 * runs.length,
        keys.activeGate(gate.requestKey),
        keys.gate(gate.id),
        ...runs.flatMap((run) => [keys.run(run.id), keys.activeRun(run.dedupeKey)]),
        gate.id,
        String(activeTtlSeconds),
        String(GATE_TTL_SECONDS),
        keys.gate(""),
        JSON.stringify(gate),
        String(RUN_TTL_SECONDS),
        ...runs.flatMap((run) => [JSON.stringify(run), run.id]),
      )) as string;
      return { id, created: id === gate.id };
    },
    async get(id) {
      // A gate written before gates were runs has no "gate" field of this shape: as good as gone.
      const text = await redis.hget(keys.gate(id), "gate").catch(() => null);
      const parsed = text === null ? undefined : storedGateSchema.safeParse(JSON.parse(text));
      return parsed?.success ? parsed.data : undefined;
    },
    async release(gate) {
      const key = keys.activeGate(gate.requestKey);
      if ((await redis.get(key)) === gate.id) await redis.del(key);
    },
  };
}
