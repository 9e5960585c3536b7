import type { Logger } from "pino";
import type { AppWebhookDeliveries } from "../github/app-webhook-deliveries.ts";
import { missedDeliveries, type MissedDelivery } from "./missed-deliveries.ts";

export interface DeliveryRecoveryDeps {
  deliveries: AppWebhookDeliveries;
  /** Whether the intake already acted on (or deliberately ignored) an event's delivery id. */
  isHandled(guid: string): Promise<boolean>;
  /**
   * Claims an event's redelivery for every process for a while; false when another sweep asked
   * for it recently (it may still be on its way, or the bot may be failing it again).
   */
  claim(guid: string): Promise<boolean>;
  log: Logger;
  onRecovered(missed: MissedDelivery): void;
  /** How far back to look: GitHub redelivers only recent deliveries (3 days). */
  windowMs: number;
  /** At most this many redeliveries per sweep; the rest wait for the next. */
  maxPerSweep: number;
  /**
   * How long to wait for one redelivery to be handled before asking for the next, so that events
   * of one pull request are acted on in the order they happened.
   */
  settleMs: number;
  now?: () => number;
  /** Ends the sweep early (the bot is stopping). */
  signal?: AbortSignal;
}

/**
 * One sweep: asks GitHub to deliver again each recent event the bot never received and never
 * handled (GitHub does not retry failed deliveries on its own), oldest first, one at a time.
 * Returns how many it asked for.
 */
export async function recoverDeliveries(deps: DeliveryRecoveryDeps): Promise<number> {
  const now = deps.now ?? Date.now;
  const missed = missedDeliveries(await deps.deliveries.listSince(now() - deps.windowMs));
  let asked = 0;
  for (const delivery of missed) {
    if (asked >= deps.maxPerSweep || deps.signal?.aborted) break;
    if (await deps.isHandled(delivery.guid)) continue;
    if (!(await deps.claim(delivery.guid))) continue;
    await deps.deliveries.redeliver(delivery.deliveryId);
    asked++;
    deps.onRecovered(delivery);
    deps.log.info(
      {
        deliveryId: delivery.guid,
        event: delivery.action ? `${delivery.event}.${delivery.action}` : delivery.event,
        firstAttemptAt: new Date(delivery.firstAttemptAt).toISOString(),
      },
      "missed webhook delivery: asked GitHub to deliver it again",
    );
    await settled(() => deps.isHandled(delivery.guid), deps.settleMs, deps.signal);
  }
  return asked;
}

async function settled(check: () => Promise<boolean>, timeoutMs: number, signal?: AbortSignal) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !signal?.aborted && !(await check()))
    await new Promise((r) => setTimeout(r, 100));
}
