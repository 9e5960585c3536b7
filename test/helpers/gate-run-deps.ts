import type { Redis } from "ioredis";
import type { GateVerdict } from "../../src/analysis/gate-verdict.ts";
import type { Arch } from "@netstress/core/arch/arch.ts";
import { createGatePublisher } from "../../src/gate/publish-gate-run.ts";
import { createGateStore, gateRunId, type GateStore } from "../../src/gate/gate-store.ts";
import { applyAndPublish, type RunDeps } from "../../src/queue/run-deps.ts";
import { runMachinery } from "./run-machinery.ts";

/** The run machinery on the test Redis (fresh prefix) with gate runs told to their gates. */
export async function testGateDeps(): Promise<{
  runs: RunDeps;
  gates: GateStore;
  redis: Redis;
  prefix: string;
  close(): Promise<void>;
}> {
  let gates: GateStore | undefined;
  const machinery = await runMachinery(({ store, redis, prefix }) => {
    gates = createGateStore({ redis, prefix });
    return createGatePublisher({ gates, runs: store });
  });
  return { ...machinery, gates: gates! };
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
