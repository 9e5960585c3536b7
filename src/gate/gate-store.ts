import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { z } from "zod";
import { archSchema, type Arch } from "../arch/arch.ts";
import { gateArchSchema, type GateArch } from "./gate-schemas.ts";

/** What a gate was asked and against what it compares; fixed at creation. */
export const storedGateSchema = z.object({
  id: z.string(),
  payload: z.string(),
  baselinePayload: z.string(),
  baselineSource: z.enum(["request", "release-controller"]),
  baselineRelease: z.string().optional(),
  stream: z.string(),
  iterations: z.number().int().positive(),
  arches: z.array(archSchema).min(1),
  /** Build-farm capabilities every shard needs beyond its arch; absent: none. */
  capabilities: z.array(z.string()).optional(),
  createdAt: z.string(),
  /** Identical requests share it; while the gate is active, they get this gate. */
  requestKey: z.string(),
});
export type StoredGate = z.infer<typeof storedGateSchema>;

export interface GateStore {
  /**
   * Stores a new gate unless an active gate has the same request key; atomic, so of any number of
   * concurrent identical requests exactly one creates. `created` false: `id` is the existing gate.
   */
  createOrJoin(gate: StoredGate): Promise<{ id: string; created: boolean }>;
  get(id: string): Promise<{ gate: StoredGate; arches: GateArch[] } | undefined>;
  /** Replaces one arch's state; once every arch is completed, identical requests start a new gate. */
  setArch(id: string, arch: GateArch): Promise<void>;
  /** Removes a gate that could not be queued. */
  remove(gate: StoredGate): Promise<void>;
  /** Ids of the gates still active (some arch not completed, within the active window). */
  listActive(): Promise<string[]>;
}

/** How long a gate stays readable. */
const GATE_TTL_SECONDS = 90 * 24 * 3600;

// Joins the active gate of the request key if it still exists, else writes the new gate and claims the key.
const CREATE_SCRIPT = `
local existing = redis.call('GET', KEYS[1])
if existing and redis.call('EXISTS', ARGV[4] .. existing) == 1 then return existing end
redis.call('HSET', KEYS[2], unpack(ARGV, 5))
redis.call('EXPIRE', KEYS[2], ARGV[3])
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return ARGV[1]
`;

/**
 * Identical requests: the same candidate, baseline, stream, arches and capabilities (in any order)
 * and iterations.
 */
export function gateRequestKey(input: {
  payload: string;
  baselinePayload: string;
  stream: string;
  arches: readonly Arch[];
  iterations: number;
  capabilities?: readonly string[];
}): string {
  const arches = [...input.arches].sort();
  const identity: unknown[] = [input.payload, input.baselinePayload, input.stream, arches, input.iterations];
  const capabilities = [...new Set(input.capabilities)].sort();
  // Without capabilities, the key stays what it was before gates could require them.
  if (capabilities.length > 0) identity.push(capabilities);
  return createHash("sha256").update(JSON.stringify(identity)).digest("hex");
}

export function createGateStore(options: {
  redis: Redis;
  prefix: string;
  activeTtlSeconds?: number;
}): GateStore {
  const { redis, prefix, activeTtlSeconds = 24 * 3600 } = options;
  const gateKeyPrefix = `${prefix}:gate:`;
  const gateKey = (id: string) => `${gateKeyPrefix}${id}`;
  const activeKey = (requestKey: string) => `${prefix}:gate-active:${requestKey}`;
  const archField = (arch: Arch) => `arch:${arch}`;

  const get = async (id: string) => {
    const fields = await redis.hgetall(gateKey(id));
    if (!fields.gate) return undefined;
    const gate = storedGateSchema.parse(JSON.parse(fields.gate));
    const arches = gate.arches.map((arch) => gateArchSchema.parse(JSON.parse(fields[archField(arch)]!)));
    return { gate, arches };
  };

  return {
    async createOrJoin(gate) {
      const fields = [
        "gate",
        JSON.stringify(gate),
        ...gate.arches.flatMap((arch) => [
          archField(arch),
          JSON.stringify({ arch, state: "queued", reasons: [] } satisfies GateArch),
        ]),
      ];
      const id = (await redis.eval(
        CREATE_SCRIPT,
        2,
        activeKey(gate.requestKey),
        gateKey(gate.id),
        gate.id,
        String(activeTtlSeconds),
        String(GATE_TTL_SECONDS),
        gateKeyPrefix,
        ...fields,
      )) as string;
      return { id, created: id === gate.id };
    },

    get,

    async setArch(id, arch) {
      await redis.hset(gateKey(id), archField(arch.arch), JSON.stringify(arch));
      // Each arch writes before it reads, so the last one to complete always sees all completed.
      const current = await get(id);
      if (current && current.arches.every((a) => a.state === "completed")) {
        const key = activeKey(current.gate.requestKey);
        if ((await redis.get(key)) === id) await redis.del(key);
      }
    },

    async listActive() {
      const ids = new Set<string>();
      const stream = redis.scanStream({ match: activeKey("*"), count: 500 });
      for await (const keys of stream as AsyncIterable<string[]>) {
        if (keys.length === 0) continue;
        for (const id of await redis.mget(...keys)) if (id) ids.add(id);
      }
      return [...ids];
    },

    async remove(gate) {
      await redis.del(gateKey(gate.id));
      if ((await redis.get(activeKey(gate.requestKey))) === gate.id)
        await redis.del(activeKey(gate.requestKey));
    },
  };
}
