import type { Server } from "node:http";
import type { Metrics } from "./metrics.ts";

/**
 * Counts webhook deliveries by the status the bot answered them with, watching the HTTP server
 * itself: Probot answers bad signatures before any handler of ours runs, and this still sees them.
 */
export function observeWebhooks(options: { server: Server; webhookPath: string; metrics: Metrics }): void {
  const { server, webhookPath, metrics } = options;
  server.on("request", (req, res) => {
    if (req.method !== "POST" || new URL(req.url ?? "/", "http://bot").pathname !== webhookPath) return;
    const event = req.headers["x-github-event"];
    res.once("finish", () =>
      metrics.webhookReceived({
        event: typeof event === "string" ? event : "unknown",
        status: res.statusCode,
      }),
    );
  });
}
