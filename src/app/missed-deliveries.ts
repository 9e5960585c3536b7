import type { HookDelivery } from "../github/app-webhook-deliveries.ts";

/** An event whose every delivery attempt failed: what to ask GitHub to send again. */
export interface MissedDelivery {
  guid: string;
  /** The newest failed attempt (redelivery is asked for by attempt id). */
  deliveryId: number;
  event: string;
  action: string | null;
  /** When GitHub first tried to deliver it (ms). */
  firstAttemptAt: number;
  /** The first attempt's id: GitHub's ids grow, so it orders events delivered in one second. */
  firstAttemptId: number;
}

/**
 * Attempts the bot never got: no answer at all (down, timed out, connection refused) or a 5xx
 * (Redis down at intake). A 4xx is the bot refusing the delivery (bad signature or payload):
 * sending it again would be refused again.
 */
const isMissed = (d: HookDelivery) => d.status_code === 0 || d.status_code >= 500;

/**
 * The events to recover from a listing of delivery attempts: every attempt failed (none was
 * answered at all, since one answered 2xx or 4xx reached the bot), oldest event first, so that a
 * comment typed before a push is acted on before the push.
 */
export function missedDeliveries(attempts: readonly HookDelivery[]): MissedDelivery[] {
  const byGuid = new Map<string, HookDelivery[]>();
  for (const attempt of attempts) byGuid.set(attempt.guid, [...(byGuid.get(attempt.guid) ?? []), attempt]);
  const missed: MissedDelivery[] = [];
  for (const [guid, tries] of byGuid) {
    if (!tries.every(isMissed)) continue;
    const byTime = [...tries].sort(
      (a, b) => Date.parse(a.delivered_at) - Date.parse(b.delivered_at) || a.id - b.id,
    );
    const first = byTime[0]!;
    missed.push({
      guid,
      deliveryId: byTime.at(-1)!.id,
      event: first.event,
      action: first.action,
      firstAttemptAt: Date.parse(first.delivered_at),
      firstAttemptId: first.id,
    });
  }
  return missed.sort((a, b) => a.firstAttemptAt - b.firstAttemptAt || a.firstAttemptId - b.firstAttemptId);
}
