import type { Arch } from "../arch/arch.ts";
import { materializePlan } from "../payload/materialize-plan.ts";
import { resolvePlan } from "../payload/resolve-plan.ts";
import { createRegistry, type Registry } from "../registry/create-registry.ts";
import type { ExecutionPlan } from "../runner/execution-plan.ts";
import type { StoredGate } from "./gate-store.ts";

/** Turns a gate's payloads into the binaries one arch runs: the candidate arm, and the baseline arm unless it is the same payload. */
export type ResolveGatePlan = (input: { gate: StoredGate; arch: Arch }) => Promise<ExecutionPlan>;

/**
 * The payload module's plan resolution, as PR runs use it: the candidate payload is the "pr" arm
 * (components whose binaries differ from the baseline's are its overrides), the baseline payload the
 * "baseline" arm. PayloadError and RegistryError say what is wrong with a payload.
 */
export function createGatePlanResolver(options: {
  cacheDir: string;
  registry?: Promise<Registry>;
}): ResolveGatePlan {
  const registry = options.registry ?? createRegistry({ cacheDir: options.cacheDir });
  return async ({ gate, arch }) => {
    const client = await registry;
    const sameBaseline = gate.baselinePayload === gate.payload;
    const [plan, baselinePlan] = await Promise.all([
      resolvePlan({
        payload: gate.payload,
        arch,
        registry: client,
        ...(sameBaseline ? {} : { baselinePayload: gate.baselinePayload }),
      }),
      sameBaseline ? undefined : resolvePlan({ payload: gate.baselinePayload, arch, registry: client }),
    ]);
    return materializePlan({
      plan,
      cacheDir: options.cacheDir,
      registry: client,
      ...(baselinePlan ? { baselinePlan } : {}),
    });
  };
}
