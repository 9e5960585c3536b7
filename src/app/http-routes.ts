import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ApplicationFunctionOptions } from "probot";
import { checkRunView } from "../queue/check-run-view.ts";
import type { RunRecord } from "../queue/run-record.ts";
import type { RunStore } from "../queue/run-store.ts";

type Handler = Parameters<ApplicationFunctionOptions["addHandler"]>[0];

const SCHEMA_FILE = new URL("../../schemas/network-stress.schema.json", import.meta.url);
// The report is self-contained: inline script and style, nothing loaded from elsewhere.
export const REPORT_POLICY =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";

/**
 * The bot's own pages beside the webhook: liveness, readiness (Redis answers), the run page each
 * check run links to (the HTML report once analyzed, the run's state before), and the repository
 * configuration's JSON Schema.
 */
export function createHttpRoutes(options: {
  store: RunStore;
  ready: () => Promise<boolean>;
  publicUrl: string;
}): Handler {
  return async (req, res) => {
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    const path = new URL(req.url ?? "/", "http://bot").pathname;
    if (path === "/healthz") return send(res, 200, "text/plain; charset=utf-8", "ok\n");
    if (path === "/readyz") {
      const ready = await options.ready().catch(() => false);
      return send(
        res,
        ready ? 200 : 503,
        "text/plain; charset=utf-8",
        ready ? "ready\n" : "not ready: Redis does not answer\n",
      );
    }
    if (path === "/schemas/network-stress.schema.json") {
      return send(res, 200, "application/schema+json", await readFile(SCHEMA_FILE));
    }
    const match = /^\/runs\/([0-9a-f]{32})$/.exec(path);
    if (!match) return false;
    const run = await options.store.get(match[1]!);
    if (!run) return send(res, 404, "text/plain; charset=utf-8", "no such run\n");
    if (run.reportPath) {
      const report = await readFile(run.reportPath).catch(() => undefined);
      if (report)
        return send(res, 200, "text/html; charset=utf-8", report, {
          "content-security-policy": REPORT_POLICY,
        });
    }
    return send(res, 200, "text/html; charset=utf-8", renderRunStatusPage(run, options.publicUrl), {
      "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
    });
  };
}

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

/** Until the report exists: what the check run says, refreshed every 30 seconds while active. */
function renderRunStatusPage(run: RunRecord, publicUrl: string): string {
  const view = checkRunView(run, { publicUrl });
  const refresh = run.state === "completed" ? "" : '<meta http-equiv="refresh" content="30">';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">${refresh}<title>${escapeHtml(view.name)}</title>
<style>body{font:14px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}pre{white-space:pre-wrap}</style></head>
<body><h1>${escapeHtml(view.name)} — ${escapeHtml(run.owner)}/${escapeHtml(run.repo)}#${run.pr}</h1>
<p><strong>${escapeHtml(view.output.title)}</strong></p><pre>${escapeHtml(view.output.summary)}</pre></body></html>`;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
