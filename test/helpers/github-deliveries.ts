import { createHmac, randomUUID } from "node:crypto";

/** X-Hub-Signature-256 of a body, as GitHub computes it. */
export function signPayload(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/** Posts one webhook delivery over real HTTP, signed like GitHub (or with the signature given). */
export async function deliverWebhook(options: {
  url: string;
  secret: string;
  name: string;
  payload: object;
  id?: string;
  signature?: string;
}): Promise<Response> {
  const body = JSON.stringify(options.payload);
  return fetch(options.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": options.name,
      "x-github-delivery": options.id ?? randomUUID(),
      "x-hub-signature-256": options.signature ?? signPayload(options.secret, body),
      "user-agent": "GitHub-Hookshot/test",
    },
    body,
  });
}

/** One delivery attempt as GitHub's app webhook deliveries API lists it. */
export interface RecordedDelivery {
  id: number;
  guid: string;
  delivered_at: string;
  redelivery: boolean;
  duration: number;
  status: string;
  status_code: number;
  event: string;
  action: string | null;
  installation_id: number | null;
  repository_id: number | null;
  throttled_at: string | null;
}

/**
 * GitHub's side of webhook delivery: every attempt is made over real HTTP with a real signature
 * and recorded the way the deliveries API reports it (newest first); a redelivery resends the
 * event with its original guid. The fake GitHub serves `GET /app/hook/deliveries` and
 * `POST /app/hook/deliveries/{id}/attempts` from it.
 */
export function webhookDeliveryLog(options: { secret: string }) {
  const attempts: RecordedDelivery[] = [];
  const events = new Map<string, { name: string; payload: Record<string, unknown> }>();
  let nextId = 1;
  async function attempt(url: string, guid: string, redelivery: boolean): Promise<RecordedDelivery> {
    const { name, payload } = events.get(guid)!;
    const started = Date.now();
    let status = "OK";
    let statusCode = 0;
    try {
      const response = await deliverWebhook({ url, secret: options.secret, name, payload, id: guid });
      statusCode = response.status;
      if (!response.ok) status = `Invalid HTTP Response: ${response.status}`;
    } catch {
      status = "failed to connect";
    }
    const recorded: RecordedDelivery = {
      id: nextId++,
      guid,
      delivered_at: new Date(started).toISOString().replace(/\.\d+Z$/, "Z"),
      redelivery,
      duration: (Date.now() - started) / 1000,
      status,
      status_code: statusCode,
      event: name,
      action: typeof payload.action === "string" ? payload.action : null,
      installation_id: (payload.installation as { id?: number } | undefined)?.id ?? null,
      repository_id: (payload.repository as { id?: number } | undefined)?.id ?? null,
      throttled_at: null,
    };
    attempts.unshift(recorded);
    return recorded;
  }
  return {
    /** Newest first, as GitHub lists them. */
    attempts: (): readonly RecordedDelivery[] => attempts,
    /** A new event's first delivery attempt. */
    deliver(url: string, name: string, payload: object): Promise<RecordedDelivery> {
      const guid = randomUUID();
      events.set(guid, { name, payload: payload as Record<string, unknown> });
      return attempt(url, guid, false);
    },
    /** What `POST /app/hook/deliveries/{id}/attempts` does; undefined: no such delivery. */
    redeliver(url: string, deliveryId: number): Promise<RecordedDelivery> | undefined {
      const original = attempts.find((a) => a.id === deliveryId);
      return original && attempt(url, original.guid, true);
    },
  };
}
export type WebhookDeliveryLog = ReturnType<typeof webhookDeliveryLog>;
