import type { Logger } from "pino";
import type { Lease } from "./capacity-ledger.ts";

/** Where leases live: renewed in one batch, released one by one, adopted after a restart. */
export interface LeaseStore<L> {
  renew(leases: readonly L[]): Promise<void>;
  release(lease: L): Promise<void>;
  adopt?(lease: L): Promise<void>;
}

const farmLeaseId = (lease: Lease) => `${lease.cluster}/${lease.id}`;

/**
 * The leases this replica holds, renewed together well before they lapse (farm capacity leases by
 * default; the cluster sources' leases with their own store and id).
 */
export function createLeaseKeeper<L = Lease>(options: {
  ledger: LeaseStore<L>;
  leaseMs: number;
  logger: Logger;
  id?: (lease: L) => string;
}) {
  const held = new Map<string, L>();
  const waiters = new Set<() => void>();
  const key = options.id ?? (farmLeaseId as unknown as (lease: L) => string);
  const timer = setInterval(() => {
    options.ledger
      .renew([...held.values()])
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
    async release(lease: L): Promise<void> {
      held.delete(key(lease));
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
export type LeaseKeeper<L = Lease> = ReturnType<typeof createLeaseKeeper<L>>;
