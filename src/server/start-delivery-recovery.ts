import type { Logger } from "pino";
import { recoverDeliveries, type DeliveryRecoveryDeps } from "../app/recover-deliveries.ts";

export interface DeliveryRecoveryTiming {
  /** Between sweeps (the first runs at start-up). */
  intervalMs: number;
  windowMs: number;
  maxPerSweep: number;
  settleMs: number;
  /** How long a redelivery asked for is not asked for again. */
  claimMs: number;
}

export const DEFAULT_DELIVERY_RECOVERY: DeliveryRecoveryTiming = {
  intervalMs: 5 * 60_000,
  windowMs: 3 * 24 * 3600_000,
  maxPerSweep: 30,
  settleMs: 10_000,
  claimMs: 60 * 60_000,
};

/**
 * Recovers missed webhook deliveries at start-up and every few minutes, one sweep at a time; a
 * sweep that fails (GitHub down) is logged and the next one tries again.
 */
export function startDeliveryRecovery(
  deps: Omit<DeliveryRecoveryDeps, "windowMs" | "maxPerSweep" | "settleMs" | "signal"> & {
    timing: DeliveryRecoveryTiming;
    log: Logger;
  },
): { stop(): Promise<void> } {
  const { timing } = deps;
  const stopping = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const sweep = async () => {
    try {
      await recoverDeliveries({ ...deps, ...timing, signal: stopping.signal });
    } catch (error) {
      deps.log.warn({ err: error }, "could not recover missed webhook deliveries; trying again later");
    }
    if (!stopping.signal.aborted) timer = setTimeout(() => (running = sweep()), timing.intervalMs);
  };
  let running = sweep();
  return {
    async stop() {
      stopping.abort();
      clearTimeout(timer);
      await running;
    },
  };
}
