import type { LeaseKeeper } from "@netstress/core/kube/lease-keeper.ts";
import type {
  ClusterLeaseKey,
  ClusterLeases,
  QuotaReservation,
  ReservationAnswer,
} from "./cluster-leases.ts";

/**
 * Reserves a run's whole need of a source's quota (every lease at once), renewing it from then on.
 * With `wait`, the run keeps its place in the quota's queue, asking again whenever this replica
 * frees a lease or `pollMs` passed, and tells `onQueued` how full the quota is; without, it asks
 * once. A run that stops waiting (abort, no wait) leaves the queue.
 */
export async function reserveQuota(options: {
  leases: ClusterLeases;
  keeper: LeaseKeeper<ClusterLeaseKey>;
  reservation: QuotaReservation;
  wait: boolean;
  pollMs: number;
  signal: AbortSignal;
  onQueued: (detail: string) => void;
}): Promise<ReservationAnswer> {
  const { leases, reservation, signal } = options;
  try {
    for (;;) {
      const answer = await leases.reserve(reservation);
      if (answer.granted) {
        for (const lease of reservation.leases) options.keeper.hold(lease);
        return answer;
      }
      if (!options.wait) {
        await leases.withdraw(reservation.pool, reservation.runId);
        return answer;
      }
      const ahead = answer.ahead > 0 ? `, ${answer.ahead} run(s) ahead` : "";
      options.onQueued(`${reservation.pool} quota ${answer.held}/${reservation.capacity}${ahead}`);
      await options.keeper.released(options.pollMs, signal);
      signal.throwIfAborted();
    }
  } catch (error) {
    await leases.withdraw(reservation.pool, reservation.runId).catch(() => undefined);
    throw error;
  }
}
