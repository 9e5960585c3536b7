import { escapeHtml } from "../http/escape-html.ts";
import type { RouteHandler } from "../http/route-handler.ts";
import { PAGE_POLICY, send } from "../http/send.ts";
import { describeSubject } from "../runs/describe-subject.ts";
import type { RunRecord } from "../runs/run-record.ts";
import type { Metrics } from "./metrics.ts";
import type { RunActivity } from "./run-activity.ts";

const RECENT_RUNS = 50;

/** The index of recent runs of every subject: newest first, each linking to its run page (pure). */
export function renderRunsIndex(runs: readonly RunRecord[], now: Date): string {
  const rows = runs
    .map((run) => {
      const outcome = run.state === "completed" ? (run.conclusion ?? "completed") : run.state;
      const { what: subject, ran: what } = describeSubject(run);
      const progress =
        run.progress && run.state === "running" ? ` ${run.progress.done}/${run.progress.total}` : "";
      return (
        `<tr class="${escapeHtml(outcome)}"><td><a href="runs/${run.id}">${escapeHtml(subject)}</a></td>` +
        `<td>${escapeHtml(run.arch)}</td><td>${escapeHtml(what)}</td>` +
        `<td>${run.options.iterations} × ${escapeHtml(run.options.baseline)}</td><td>${escapeHtml(outcome + progress)}</td>` +
        `<td>${escapeHtml(run.reason ?? run.output?.title ?? "")}</td><td><time>${escapeHtml(run.createdAt)}</time></td></tr>`
      );
    })
    .join("\n");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="60"><title>network-stress runs</title>
<style>body{font:14px/1.5 system-ui,sans-serif;margin:2rem}table{border-collapse:collapse}td,th{padding:.25rem .6rem;border-bottom:1px solid #ddd;text-align:left}
.success td:nth-child(5){color:#1a7f37}.failure td:nth-child(5),.timed_out td:nth-child(5){color:#cf222e}.neutral td:nth-child(5){color:#9a6700}</style></head>
<body><h1>network-stress: recent runs</h1><p>${runs.length} most recent run(s), newest first, as of ${escapeHtml(now.toISOString())}.</p>
<table><thead><tr><th>for</th><th>arch</th><th>commit or payload</th><th>iterations</th><th>state</th><th>why</th><th>created</th></tr></thead>
<tbody>
${rows || '<tr><td colspan="7">No runs yet.</td></tr>'}
</tbody></table></body></html>`;
}

/**
 * GET /metrics (Prometheus text format) and GET /runs, the index of recent runs beside the run
 * pages the app serves at /runs/{id}.
 */
export function createObservabilityRoutes(options: {
  metrics: Metrics;
  activity: RunActivity;
  getRun: (id: string) => Promise<RunRecord | undefined>;
  now?: () => Date;
}): RouteHandler {
  const { metrics, activity, getRun, now = () => new Date() } = options;
  return async (req, res) => {
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    const path = new URL(req.url ?? "/", "http://bot").pathname;
    if (path === "/metrics")
      return send(res, 200, metrics.registry.contentType, await metrics.registry.metrics());
    if (path !== "/runs" && path !== "/runs/") return false;
    const ids = await activity.recent(RECENT_RUNS);
    const runs = (await Promise.all(ids.map(getRun))).filter((run): run is RunRecord => run !== undefined);
    return send(res, 200, "text/html; charset=utf-8", renderRunsIndex(runs, now()), {
      "content-security-policy": PAGE_POLICY,
    });
  };
}
