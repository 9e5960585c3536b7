import type { Logger } from "pino";
import type { GateQueue } from "./gate-queue.ts";
import type { GateStore } from "./gate-store.ts";

/**
 * At a worker's start, puts every unfinished arch of an active gate on the queue: an arch whose job
 * was never added (the process died between storing the gate and queueing it) starts now. Job ids
 * derive from gate and arch, so arches already queued, delayed or running are left as they are.
 */
export async function requeueActiveGates(deps: {
  store: Pick<GateStore, "listActive" | "get">;
  queue: Pick<GateQueue, "enqueue">;
  log: Logger;
}): Promise<number> {
  let arches = 0;
  for (const gateId of await deps.store.listActive()) {
    const found = await deps.store.get(gateId);
    for (const arch of found?.arches ?? []) {
      if (arch.state === "completed") continue;
      await deps.queue.enqueue({ gateId, arch: arch.arch });
      arches += 1;
    }
  }
  deps.log.info({ arches }, "active gate arches re-queued");
  return arches;
}
