import type { Arm } from "@netstress/core/model/result-record.ts";
import { ClustersUnavailableError } from "../../src/runs/clusters-unavailable-error.ts";
import type {
  ClusterLease,
  ClusterProvider,
  ClusterRequest,
  ProvisionProgress,
} from "../../src/runs/clusters-under-test.ts";

export interface TestClusterProvider extends ClusterProvider {
  /** Every request, one per arm, as asked. */
  requests: ClusterRequest[];
  /** Leases handed out and not given back, by cluster id. */
  held(): string[];
  /** Every lease handed out, by cluster id. */
  handedOut(): string[];
  /** Marks a cluster lost, as its source would on seeing it gone. */
  lose(id: string, reason?: string): void;
  /** Every upgrade asked of a lease (see `movable`), in order. */
  upgrades: { id: string; payload: string }[];
}

/**
 * A cluster source over given kubeconfig texts: `clusters` per arm (the arm's payload is what the
 * request asked for). `installMs` each acquire waits (reporting "installing" then "ready"), aborted
 * by the request's signal; `refuse` names arms whose requests fail as the quota would. With
 * `movable` its leases may be upgraded (ClusterLease.upgrade): each takes `upgradeMs`, and those
 * `fail` gives a reason for throw a ClustersUnavailableError with it instead. A run asking again,
 * by number (RunClusterRequest.firstSlot), for a cluster it still holds gets that cluster back.
 */
export function testClusterProvider(options: {
  kubeconfig: (id: string) => string;
  installMs?: number;
  refuse?: Partial<Record<Arm, string>>;
  movable?: { upgradeMs?: number; fail?: (id: string) => string | undefined };
}): TestClusterProvider {
  const requests: ClusterRequest[] = [];
  const upgrades: { id: string; payload: string }[] = [];
  const movable = options.movable;
  const held = new Map<string, AbortController>();
  const handedOut: string[] = [];
  /** Each cluster by its run, arm and number. */
  const slots = new Map<string, string>();
  let next = 0;
  return {
    name: "test",
    requests,
    upgrades,
    movesClusters: () => movable !== undefined,
    held: () => [...held.keys()],
    handedOut: () => [...handedOut],
    lose(id, reason = "the cluster stopped answering") {
      held.get(id)?.abort(reason);
    },
    // All or nothing, as the provider's contract says: a refused arm gives the others' clusters back.
    async acquire(run) {
      const settled = await Promise.allSettled(
        run.arms.map(
          async ({ arm, payload, upgradeTarget }) =>
            [
              arm,
              await acquireArm(
                { ...run, arm, payload, ...(upgradeTarget ? { upgradeTarget } : {}) },
                run.firstSlot,
              ),
            ] as const,
        ),
      );
      const got = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
      const failed = settled.find((s) => s.status === "rejected");
      if (failed) {
        await Promise.all(got.flatMap(([, leases]) => leases.map((l) => l.release())));
        throw failed.reason;
      }
      return Object.fromEntries(got);
    },
    async reconcile() {
      return { released: 0 };
    },
  };

  async function acquireArm(request: ClusterRequest, firstSlot: number | undefined): Promise<ClusterLease[]> {
    requests.push(request);
    const progress = (phase: ProvisionProgress["phase"], ready: number) =>
      request.onProgress?.({
        arm: request.arm,
        arch: request.arch,
        wanted: request.count,
        ready,
        phase,
        since: new Date().toISOString(),
      });
    const refused = options.refuse?.[request.arm];
    if (refused) {
      progress("queued", 0);
      throw new ClustersUnavailableError(refused, { reason: refused });
    }
    progress("installing", 0);
    await sleep(options.installMs ?? 0, request.signal);
    progress("ready", request.count);
    return Array.from({ length: request.count }, (_, index): ClusterLease => {
      // A run asking again for a cluster it still holds by its number gets it back: a resumed
      // crossover adopting its own (runs that do not number their clusters never adopt).
      const slot = `${request.runId}|${request.arm}|${(firstSlot ?? 0) + index}`;
      const adopted = firstSlot === undefined ? undefined : slots.get(slot);
      const id = adopted && held.has(adopted) ? adopted : `test/${request.arm}-${next++}`;
      slots.set(slot, id);
      const lost = held.get(id) ?? new AbortController();
      held.set(id, lost);
      handedOut.push(id);
      return {
        cluster: {
          id,
          source: "test",
          arch: request.arch,
          payload: request.payload,
          kubeconfig: async () => options.kubeconfig(id),
        },
        lost: lost.signal,
        release: async () => {
          held.delete(id);
        },
        ...(movable
          ? {
              upgrade: async (payload: string, signal: AbortSignal) => {
                upgrades.push({ id, payload });
                await sleep(movable.upgradeMs ?? 0, signal);
                const failed = movable.fail?.(id);
                if (failed) throw new ClustersUnavailableError(`${id}: ${failed}`, { reason: failed });
              },
            }
          : {}),
      };
    });
  }
}

/** Waits `ms`, or rejects with the signal's reason once it is aborted (at once if it is already). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    // An abort before the wait began fires no event: a source asked to move a cluster by a run
    // that is already stopping must not hold it for the whole upgrade.
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}
