import { pino, type DestinationStream, type Logger } from "pino";

/**
 * Request and client fields that carry credentials: bearer tokens of the gate API, cookies, webhook
 * signatures. pino-http (Probot's request log) logs request headers; these never reach a log.
 */
export const REDACTED_PATHS = [
  "req.headers.authorization",
  "req.headers.cookie",
  "req.headers['x-hub-signature']",
  "req.headers['x-hub-signature-256']",
  "headers.authorization",
  "request.headers.authorization",
  "err.request.headers.authorization",
  "err.response.headers.authorization",
];

/**
 * The bot's logger: one JSON object per line (pino), named netstress, with credentials redacted.
 * Run and delivery ids travel as `runId` and `deliveryId` fields (Probot's request log uses the
 * delivery id as the request id).
 */
export function createLogger(options: { level: string; destination?: DestinationStream }): Logger {
  return pino(
    { level: options.level, name: "netstress", redact: { paths: REDACTED_PATHS, censor: "[redacted]" } },
    options.destination,
  );
}
