import type { Server } from "node:http";
import type { Metrics } from "./metrics.ts";

/**
 * Counts webhook deliveries by event and the status the bot answered them with, watching the HTTP
 * server itself: Probot answers bad signatures before any handler of ours runs, and this still sees
 * them. The event label comes from a known set only — the events the app subscribes to, else
 * "other" — so that nobody can grow /metrics by posting made-up headers (the status is the bot's own).
 */
export function observeWebhooks(options: {
  server: Server;
  webhookPath: string;
  metrics: Metrics;
  /** The event names worth a label of their own. */
  events: readonly string[];
}): void {
  const { server, webhookPath, metrics } = options;
  const known = new Set(options.events);
  server.on("request", (req, res) => {
    if (req.method !== "POST" || new URL(req.url ?? "/", "http://bot").pathname !== webhookPath) return;
    const event = req.headers["x-github-event"];
    res.once("finish", () =>
      metrics.webhookReceived({
        event: typeof event === "string" && known.has(event) ? event : "other",
        status: res.statusCode,
      }),
    );
  });
}
