import { readFile } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { checkRunView } from "../github/check-run-view.ts";
import { escapeHtml } from "../http/escape-html.ts";
import type { RouteHandler } from "../http/route-handler.ts";
import { sendArtifact } from "../http/send-artifact.ts";
import { sendReport } from "../http/send-report.ts";
import { PAGE_POLICY, send } from "../http/send.ts";
import { runDir } from "../queue/run-dir.ts";
import { runArtifactFile } from "../queue/run-artifacts.ts";
import { describeSubject } from "../runs/describe-subject.ts";
import { isPrRun, type RunRecord } from "../runs/run-record.ts";

const SCHEMA_FILE = new URL("../../schemas/network-stress.schema.json", import.meta.url);

/**
 * The bot's own pages beside the webhook: liveness, readiness (Redis answers), the run page each
 * check run links to (the HTML report once analyzed, the run's state before), the files its
 * build-farm pods' binaries wrote, and the repository configuration's JSON Schema.
 */
export function createHttpRoutes(options: {
  store: { get(id: string): Promise<RunRecord | undefined> };
  ready: () => Promise<boolean>;
  publicUrl: string;
  /** Reports are served from under it only. */
  dataDir: string;
}): RouteHandler {
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
    // Read from the URL as sent: a parsed URL has its "." and ".." names folded away already.
    const rawPath = (req.url ?? "/").split(/[?#]/)[0]!;
    const artifact = /^\/runs\/([0-9a-f]{32})\/artifacts\/(.+)$/.exec(rawPath);
    if (artifact) return serveArtifact(res, artifact[1]!, artifact[2]!);
    const match = /^\/runs\/([0-9a-f]{32})$/.exec(path);
    if (!match) return false;
    const run = await options.store.get(match[1]!);
    if (!run) return send(res, 404, "text/plain; charset=utf-8", "no such run\n");
    if (await sendReport(res, { dataDir: options.dataDir, reportPath: run.reportPath })) return true;
    return send(res, 200, "text/html; charset=utf-8", renderRunStatusPage(run, options.publicUrl), {
      "content-security-policy": PAGE_POLICY,
    });
  };

  async function serveArtifact(res: ServerResponse, runId: string, rest: string): Promise<true> {
    const notFound = () => send(res, 404, "text/plain; charset=utf-8", "no such artifact\n");
    let segments: string[];
    try {
      segments = rest.split("/").map(decodeURIComponent);
    } catch {
      return notFound();
    }
    if (!(await options.store.get(runId))) return notFound();
    const found = runArtifactFile({ runDir: runDir(options.dataDir, runId), segments });
    if (!found || !(await sendArtifact(res, found))) return notFound();
    return true;
  }
}

/** What the run's subject is told: a PR run's check run; any other run's outcome so far. */
function statusOf(run: RunRecord, publicUrl: string) {
  const { kind, what, ran } = describeSubject(run);
  if (isPrRun(run)) {
    const view = checkRunView(run, { publicUrl });
    return { name: view.name, heading: what, ...view.output };
  }
  return {
    name: `network-stress ${kind} (${run.arch})`,
    heading: `${what}: ${ran}`,
    title: run.output?.title ?? run.reason ?? run.state,
    summary: run.output?.summary ?? "",
  };
}

/** Until the report exists: the run's status, refreshed every 30 seconds while active. */
function renderRunStatusPage(run: RunRecord, publicUrl: string): string {
  const { name, heading, title, summary } = statusOf(run, publicUrl);
  const refresh = run.state === "completed" ? "" : '<meta http-equiv="refresh" content="30">';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">${refresh}<title>${escapeHtml(name)}</title>
<style>body{font:14px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}pre{white-space:pre-wrap}</style></head>
<body><h1>${escapeHtml(name)} — ${escapeHtml(heading)}</h1>
<p><strong>${escapeHtml(title)}</strong></p><pre>${escapeHtml(summary)}</pre></body></html>`;
}
