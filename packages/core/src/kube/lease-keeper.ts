import type { Logger } from "pino";

/**
 * Where leases live: renewed in one batch (a store that never takes a lapsed lease again answers
 * which lapsed), released one by one, adopted after a restart.
 */
export interface LeaseStore<L> {
  renew(leases: readonly L[]): Promise<void | readonly L[]>;
  release(lease: L): Promise<void>;
  adopt?(lease: L): Promise<void>;
}

/**
 * The leases this replica holds, renewed together well before they lapse: the farm's capacity
 * leases, the cluster sources' leases, each kind with its own store and id.
 */
export function createLeaseKeeper<L>(options: {
  ledger: LeaseStore<L>;
  leaseMs: number;
  logger: Logger;
  /** What names a lease among those held. */
  id: (lease: L) => string;
  /** Why a lease is gone, given to the holder's lapsed() signal. */
  lapsedError?: (lease: L) => Error;
}) {
  const held = new Map<string, L>();
  /** Per held lease that someone watches: aborted when a renewal finds it lapsed. */
  const watchers = new Map<string, AbortController>();
  const waiters = new Set<() => void>();
  const key = options.id;
  const timer = setInterval(() => {
    options.ledger
      .renew([...held.values()])
      .then((lapsed) => {
        for (const lease of lapsed ?? []) {
          const id = key(lease);
          held.delete(id);
          options.logger.warn({ lease: id }, "lease lapsed before it was renewed; it is gone");
          watchers.get(id)?.abort(options.lapsedError?.(lease) ?? new Error(`lease ${id} lapsed`));
          watchers.delete(id);
        }
      })
      .catch((error: unknown) => options.logger.warn({ err: error }, "leases not renewed"));
  }, options.leaseMs / 3);
  timer.unref();
  return {
    /** Renews a lease taken elsewhere from now on. */
    hold(lease: L): void {
      held.set(key(lease), lease);
    },
    async adopt(lease: L): Promise<void> {
      await options.ledger.adopt?.(lease);
      held.set(key(lease), lease);
    },
    /** Aborted (with lapsedError) when a renewal finds this held lease gone. */
    lapsed(lease: L): AbortSignal {
      const id = key(lease);
      let watcher = watchers.get(id);
      if (!watcher) watchers.set(id, (watcher = new AbortController()));
      return watcher.signal;
    },
    async release(lease: L): Promise<void> {
      held.delete(key(lease));
      watchers.delete(key(lease));
      await options.ledger.release(lease);
      for (const wake of waiters) wake();
    },
    /** Resolves when this replica frees a lease, or after `ms` (other replicas free theirs silently). */
    released(ms: number, signal: AbortSignal): Promise<void> {
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timeout);
          waiters.delete(done);
          signal.removeEventListener("abort", done);
          resolve();
        };
        const timeout = setTimeout(done, ms);
        waiters.add(done);
        signal.addEventListener("abort", done, { once: true });
      });
    },
    stop: () => clearInterval(timer),
  };
}
export type LeaseKeeper<L> = ReturnType<typeof createLeaseKeeper<L>>;
