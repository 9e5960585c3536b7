import type { Lease } from "./capacity-ledger.ts";
import type { FarmConfig } from "./farm-config.ts";
import { jobName } from "./job-identity.ts";
import { runKey } from "@netstress/core/kube/netstress-labels.ts";
import type { LeaseKeeper } from "@netstress/core/kube/lease-keeper.ts";
import type { Placement, PlacementAnswer, PlacementWish, Placer } from "./placer.ts";
import type { CapacityReservation, Shard } from "../runs/shard-executor.ts";

/**
 * Build-farm capacity taken for a shard before its run asks for clusters under test, so that no
 * cluster idles (and costs cloud hours) while its iterations queue for pods. The capacity of the
 * shard's first iterations is placed and leased under their first attempts' Job names; when those
 * iterations are dispatched, `place` hands them what was reserved. All or nothing: a reservation
 * that does not fit whole takes nothing and waits, so runs never hold part of the farm while
 * waiting for the rest.
 */
export function createCapacityReservations(deps: {
  config: () => FarmConfig;
  placer: Placer;
  leases: LeaseKeeper<Lease>;
  pollMs: number;
}) {
  const reserved = new Map<string, Placement>();
  const giveBack = async (id: string) => {
    const placed = reserved.get(id);
    reserved.delete(id);
    if (placed) await deps.leases.release(placed.lease);
  };
  return {
    /** Places a Job: where its capacity was reserved, else as the placer decides. */
    async place(wish: PlacementWish): Promise<PlacementAnswer> {
      const placed = reserved.get(wish.id);
      if (placed && !wish.avoid.includes(placed.cluster.name)) {
        reserved.delete(wish.id);
        return placed;
      }
      if (placed) await giveBack(wish.id);
      return deps.placer.place(wish);
    },
    async reserve(input: { shard: Shard; jobs: number; signal: AbortSignal }): Promise<CapacityReservation> {
      const { shard, signal } = input;
      const capabilities = shard.capabilities ?? [];
      // Never more than the farm could ever run at once for this shard.
      const room = deps
        .config()
        .clusters.filter(
          (c) =>
            c.blocked === false &&
            c.arches.includes(shard.arch) &&
            capabilities.every((cap) => c.capabilities.includes(cap)),
        )
        .reduce((sum, c) => sum + c.capacity, 0);
      const ids = Array.from({ length: Math.max(1, Math.min(input.jobs, room)) }, (_, i) =>
        jobName({
          runId: shard.runId,
          arms: shard.arms,
          arch: shard.arch,
          iteration: shard.iterations.first + i,
          attempt: 0,
        }),
      );
      const wishes = ids.map((id) => ({
        arch: shard.arch,
        capabilities,
        avoid: [],
        runKey: runKey(shard.runId),
        id,
      }));
      for (;;) {
        signal.throwIfAborted();
        const placements = await deps.placer.placeAll(wishes);
        if (placements !== "wait") {
          placements.forEach((placement, i) => reserved.set(ids[i]!, placement));
          break;
        }
        await deps.leases.released(deps.pollMs, signal);
      }
      return { release: async () => void (await Promise.all(ids.map(giveBack))) };
    },
  };
}
