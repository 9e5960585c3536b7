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
