import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { pino } from "pino";
import { inject } from "vitest";
import type { GateVerdict } from "../../src/analysis/gate-verdict.ts";
import type { Arch } from "../../src/arch/arch.ts";
import { createGatePublisher } from "../../src/gate/publish-gate-run.ts";
import { createGateStore, gateRunId, type GateStore } from "../../src/gate/gate-store.ts";
import { createAbortBus } from "../../src/queue/abort-bus.ts";
import type { RunDeps } from "../../src/queue/run-deps.ts";
import { createRunQueues } from "../../src/queue/run-queues.ts";
import { createRunStore } from "../../src/queue/run-store.ts";
import { applyAndPublish } from "../../src/queue/run-deps.ts";

/** The run machinery on the test Redis (fresh prefix unless given) with gate runs told to their gates. */
export async function testGateDeps(options: { prefix?: string } = {}): Promise<{
  runs: RunDeps;
  gates: GateStore;
  redis: Redis;
  prefix: string;
  close(): Promise<void>;
}> {
  const redis = new Redis(inject("redisUrl"), { maxRetriesPerRequest: null });
  const prefix = options.prefix ?? `t-${randomUUID()}`;
  const store = createRunStore({ redis, prefix });
  const gates = createGateStore({ redis, prefix });
  const queues = createRunQueues({ connection: redis, prefix });
  const abortBus = await createAbortBus({ redis, prefix });
  const runs: RunDeps = {
    store,
    queues,
    abortBus,
    publish: createGatePublisher({ gates, runs: store }),
    log: pino({ level: "silent" }),
  };
  return {
    runs,
    gates,
    redis,
    prefix,
    async close() {
      await queues.close();
      await abortBus.close();
      await redis.quit();
    },
  };
}

/** Ends a gate's arch as if its run had been analyzed with this verdict. */
export async function decideGateArch(
  runs: RunDeps,
  input: { gateId: string; arch: Arch; verdict: GateVerdict; reasons: string[] },
): Promise<void> {
  const id = gateRunId(input.gateId, input.arch);
  for (const event of [{ type: "started" }, { type: "analyzing" }] as const)
    await runs.store.apply(id, event);
  await applyAndPublish(runs, id, {
    type: "analyzed",
    conclusion: input.verdict === "Rejected" ? "failure" : "success",
    output: { title: input.verdict, summary: "" },
    reportPath: "/nowhere/report.html",
    decision: { verdict: input.verdict, reasons: input.reasons },
  });
}
