import { z } from "zod";
import type { GitHubClient } from "../trust/github-client.ts";

/** One attempt to deliver a webhook, as GitHub's app webhook deliveries API lists it. */
const hookDeliverySchema = z.object({
  id: z.number(),
  /** The event's id: every attempt (and redelivery) of one event shares it, as X-GitHub-Delivery. */
  guid: z.string(),
  delivered_at: z.string(),
  redelivery: z.boolean(),
  status: z.string(),
  /** The answer's HTTP status; 0 when there was none (connection refused, timeout). */
  status_code: z.number(),
  event: z.string(),
  action: z.string().nullable(),
});
export type HookDelivery = z.infer<typeof hookDeliverySchema>;

export interface AppWebhookDeliveries {
  /** The app's delivery attempts, newest first, until one older than `since` (ms) ends the listing. */
  listSince(since: number): Promise<HookDelivery[]>;
  /** Asks GitHub to deliver an attempt's event again (it keeps the event's guid). */
  redeliver(deliveryId: number): Promise<void>;
}

/**
 * GitHub's app webhook deliveries API (`GET /app/hook/deliveries`, cursor-paginated, and
 * `POST /app/hook/deliveries/{id}/attempts`) through a client authenticated as the app (a JWT,
 * not an installation token).
 */
export function appWebhookDeliveries(
  octokit: GitHubClient,
  options: { pageSize?: number } = {},
): AppWebhookDeliveries {
  const perPage = options.pageSize ?? 100;
  return {
    async listSince(since) {
      const found: HookDelivery[] = [];
      for await (const page of octokit.paginate.iterator(octokit.rest.apps.listWebhookDeliveries, {
        per_page: perPage,
      })) {
        const attempts = z.array(hookDeliverySchema).parse(page.data);
        found.push(...attempts.filter((d) => Date.parse(d.delivered_at) >= since));
        if (attempts.some((d) => Date.parse(d.delivered_at) < since)) break;
      }
      return found;
    },
    async redeliver(deliveryId) {
      await octokit.rest.apps.redeliverWebhookDelivery({ delivery_id: deliveryId });
    },
  };
}
