import type { IncomingMessage, ServerResponse } from "node:http";

/** Pages of the bot's own: no script, inline styles only. */
export const PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'";
/** The report is self-contained: inline script and style, nothing loaded from elsewhere. */
export const REPORT_POLICY =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";

/** Answers a request (never cached, never sniffed). */
export function send(
  res: ServerResponse<IncomingMessage>,
  status: number,
  type: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): true {
  res.writeHead(status, {
    "content-type": type,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    ...headers,
  });
  res.end(body);
  return true;
}
