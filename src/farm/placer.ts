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
export type Placement = Extract<PlacementAnswer, { kind: "placed" }>;

export interface Placer {
  place(wish: PlacementWish): Promise<PlacementAnswer>;
  /** Places every wish, or none: "wait" while any of them would. */
  placeAll(wishes: readonly PlacementWish[]): Promise<Placement[] | "wait">;
}

type NotPlaced = Exclude<ReturnType<typeof chooseCluster>, { kind: "placed" }>;

interface Pending {
  wishes: readonly PlacementWish[];
  resolve: (answer: Placement[] | "wait") => void;
  reject: (error: unknown) => void;
}

/**
 * Places Jobs in batches: whatever asked while the previous batch was being placed is placed
 * together, from one reading of the loads and with one lease script, counting each placement
 * before choosing the next (so a batch spreads as single placements would). Placement decisions
 * of one replica never race each other; across replicas the lease script still guards capacity.
 * A group of wishes (a shard's reservation) is chosen and leased whole or not at all, so a group
 * that waits never holds a slot another could use. No cluster that could ever take a wish rejects
 * it with FarmError "no-eligible-cluster".
 */
export function createPlacer(deps: {
  config: () => FarmConfig;
  ledger: CapacityLedger;
  health: ClusterHealth;
  /** Sees every lease taken, before its wish is answered. */
  onLease: (lease: Lease) => void;
}): Placer {
  let queue: Pending[] = [];
  let placing = false;

  const placeBatch = async (batch: Pending[]) => {
    const { clusters } = deps.config();
    const names = clusters.map((c) => c.name);
    const runKeys = [...new Set(batch.flatMap((p) => p.wishes.map((w) => w.runKey)))];
    const [{ load, runLoads }, draining] = await Promise.all([
      deps.ledger.loads(names, runKeys),
      deps.health.draining(names),
    ]);
    const count = (counts: Map<string, number>, name: string, by: number) =>
      counts.set(name, (counts.get(name) ?? 0) + by);
    /** A cluster for each wish of a group, each counted; or why not now, with none counted. */
    const chooseGroup = (wishes: readonly PlacementWish[]): Placement[] | NotPlaced => {
      const placements: Placement[] = [];
      for (const wish of wishes) {
        const runLoad = runLoads.get(wish.runKey) ?? new Map<string, number>();
        runLoads.set(wish.runKey, runLoad);
        const placement = chooseCluster(
          { arch: wish.arch, capabilities: wish.capabilities, avoid: wish.avoid },
          { clusters, load, draining, runLoad },
        );
        if (placement.kind !== "placed") {
          for (const { lease } of placements) {
            count(load, lease.cluster, -1);
            count(runLoads.get(lease.runKey)!, lease.cluster, -1);
          }
          return placement;
        }
        const name = placement.cluster.name;
        count(load, name, 1);
        count(runLoad, name, 1);
        placements.push({
          kind: "placed",
          cluster: placement.cluster,
          lease: { cluster: name, runKey: wish.runKey, id: wish.id },
        });
      }
      return placements;
    };
    const chosen: { pending: Pending; placements: Placement[] }[] = [];
    for (const pending of batch) {
      const group = chooseGroup(pending.wishes);
      if (Array.isArray(group)) chosen.push({ pending, placements: group });
      else if (group.kind === "impossible")
        pending.reject(new FarmError("no-eligible-cluster", group.reason));
      else pending.resolve("wait");
    }
    const granted = await deps.ledger.acquire(
      chosen.map((c) => c.placements.map(({ cluster, lease }) => ({ ...lease, capacity: cluster.capacity }))),
    );
    chosen.forEach(({ pending, placements }, i) => {
      if (!granted[i]) return pending.resolve("wait");
      placements.forEach(({ lease }) => deps.onLease(lease));
      pending.resolve(placements);
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

  const placeAll = (wishes: readonly PlacementWish[]) =>
    new Promise<Placement[] | "wait">((resolve, reject) => {
      queue.push({ wishes, resolve, reject });
      void drain();
    });
  return {
    placeAll,
    async place(wish) {
      const answer = await placeAll([wish]);
      return answer === "wait" ? { kind: "wait" } : answer[0]!;
    },
  };
}
