import type { Logger } from "pino";
import type { CapacityLedger, Lease } from "./capacity-ledger.ts";

/** The leases this replica holds, renewed together well before they lapse. */
export function createLeaseKeeper(options: { ledger: CapacityLedger; leaseMs: number; logger: Logger }) {
  const held = new Map<string, Lease>();
  const waiters = new Set<() => void>();
  const key = (lease: Lease) => `${lease.cluster}/${lease.id}`;
  const timer = setInterval(() => {
    options.ledger
      .renew([...held.values()])
      .catch((error: unknown) => options.logger.warn({ err: error }, "capacity leases not renewed"));
  }, options.leaseMs / 3);
  timer.unref();
  return {
    /** Renews a lease the placer took from now on. */
    hold(lease: Lease): void {
      held.set(key(lease), lease);
    },
    async adopt(lease: Lease): Promise<void> {
      await options.ledger.adopt(lease);
      held.set(key(lease), lease);
    },
    async release(lease: Lease): Promise<void> {
      held.delete(key(lease));
      await options.ledger.release(lease);
      for (const wake of waiters) wake();
    },
    /** Resolves when this replica frees capacity, or after `ms` (other replicas free it silently). */
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
export type LeaseKeeper = ReturnType<typeof createLeaseKeeper>;
