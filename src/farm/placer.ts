import type { Arch } from "@netstress/core/arch/arch.ts";
import type { Lease } from "./capacity-ledger.ts";
import type { CapacityLedger } from "./capacity-ledger.ts";
import { chooseCluster } from "./choose-cluster.ts";
import type { ClusterHealth } from "./cluster-health.ts";
import type { ClusterConfig, FarmConfig } from "./farm-config.ts";
import { FarmError } from "./farm-error.ts";

export interface PlacementWish {
  arch: Arch;
  capabilities: readonly string[];
  /** Clusters that could not place an earlier attempt of this iteration. */
  avoid: readonly string[];
  runKey: string;
  /** The Job name the lease is for. */
  id: string;
}

/** Where the Job goes, with its lease taken; or "wait" (every cluster for it full or draining). */
export type PlacementAnswer = { kind: "placed"; cluster: ClusterConfig; lease: Lease } | { kind: "wait" };

interface Pending {
  wish: PlacementWish;
  resolve: (answer: PlacementAnswer) => void;
  reject: (error: unknown) => void;
}

/**
 * Places Jobs in batches: whatever asked while the previous batch was being placed is placed
 * together, from one reading of the loads and with one lease script, counting each placement
 * before choosing the next (so a batch spreads as single placements would). Placement decisions
 * of one replica never race each other; across replicas the lease script still guards capacity.
 * No cluster that could ever take a wish rejects it with FarmError "no-eligible-cluster".
 */
export function createPlacer(deps: {
  config: () => FarmConfig;
  ledger: CapacityLedger;
  health: ClusterHealth;
  /** Sees every lease taken, before its wish is answered. */
  onLease: (lease: Lease) => void;
}): (wish: PlacementWish) => Promise<PlacementAnswer> {
  let queue: Pending[] = [];
  let placing = false;

  const placeBatch = async (batch: Pending[]) => {
    const { clusters } = deps.config();
    const names = clusters.map((c) => c.name);
    const runKeys = [...new Set(batch.map((p) => p.wish.runKey))];
    const [{ load, runLoads }, draining] = await Promise.all([
      deps.ledger.loads(names, runKeys),
      deps.health.draining(names),
    ]);
    const chosen: { pending: Pending; cluster: ClusterConfig; lease: Lease }[] = [];
    for (const pending of batch) {
      const { wish } = pending;
      const runLoad = runLoads.get(wish.runKey) ?? new Map<string, number>();
      const placement = chooseCluster(
        { arch: wish.arch, capabilities: wish.capabilities, avoid: wish.avoid },
        { clusters, load, draining, runLoad },
      );
      if (placement.kind === "impossible") {
        pending.reject(new FarmError("no-eligible-cluster", placement.reason));
      } else if (placement.kind === "wait") {
        pending.resolve({ kind: "wait" });
      } else {
        const name = placement.cluster.name;
        load.set(name, (load.get(name) ?? 0) + 1);
        runLoad.set(name, (runLoad.get(name) ?? 0) + 1);
        runLoads.set(wish.runKey, runLoad);
        chosen.push({
          pending,
          cluster: placement.cluster,
          lease: { cluster: name, runKey: wish.runKey, id: wish.id },
        });
      }
    }
    const granted = await deps.ledger.acquire(
      chosen.map((c) => ({ ...c.lease, capacity: c.cluster.capacity })),
    );
    chosen.forEach(({ pending, cluster, lease }, i) => {
      if (!granted[i]) return pending.resolve({ kind: "wait" });
      deps.onLease(lease);
      pending.resolve({ kind: "placed", cluster, lease });
    });
  };

  const drain = async () => {
    if (placing) return;
    placing = true;
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      await placeBatch(batch).catch((error: unknown) => batch.forEach((p) => p.reject(error)));
    }
    placing = false;
  };

  return (wish) =>
    new Promise<PlacementAnswer>((resolve, reject) => {
      queue.push({ wish, resolve, reject });
      void drain();
    });
}
