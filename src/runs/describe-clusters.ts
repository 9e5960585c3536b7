import { clusterHours } from "./cluster-hours.ts";
import type { ProvisionProgress } from "./clusters-under-test.ts";
import { payloadName } from "./payload-name.ts";
import type { RunRecord } from "./run-record.ts";

/**
 * One line per arm whose clusters are on their way: "installing 2 clusters of the PR payload on
 * arm64 — 14 min", "queued for clusters: hive quota 8/8". Minutes count to the run's last update.
 */
export function provisioningLines(run: RunRecord): string[] {
  const now = Date.parse(run.updatedAt);
  return (run.provisioning ?? []).map((p: ProvisionProgress) => {
    const minutes = Math.max(0, Math.floor((now - Date.parse(p.since)) / 60_000));
    const missing = p.wanted - p.ready;
    const what = `${missing} cluster${missing === 1 ? "" : "s"} of ${payloadName(run, p.arm)} on ${p.arch}`;
    const line =
      p.phase === "queued"
        ? `queued for clusters${p.detail ? `: ${p.detail}` : ` (${what})`}`
        : `${p.phase} ${what} — ${minutes} min${p.detail ? ` (${p.detail})` : ""}`;
    return line;
  });
}

/**
 * The clusters under test a run held, as a Markdown table (arm, cluster, payload, hours), with the
 * cluster-hours spent; empty when it held none.
 */
export function clustersTable(run: RunRecord): string {
  const clusters = run.clusters ?? [];
  if (clusters.length === 0) return "";
  const now = new Date(run.finishedAt ?? run.updatedAt);
  const rows = clusters.map(
    (c) =>
      `| ${c.shared ? "both" : c.arm} | \`${c.id}\` | \`${c.payload}\` | ${clusterHours([c], now).toFixed(2)}${c.releasedAt ? "" : " (held)"} |`,
  );
  return [
    `**Clusters under test** — ${clusters.length}, ${clusterHours(clusters, now).toFixed(2)} cluster-hours`,
    "",
    "| arm | cluster | payload | hours |",
    "| --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}
