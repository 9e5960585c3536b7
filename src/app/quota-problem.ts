import type { Quotas } from "../config/bot-settings.ts";
import { runClusters } from "../runs/run-clusters.ts";
import type { PrRun } from "../runs/run-record.ts";

/**
 * Why a request may not start `newRuns` more runs of `iterations` each (with clusters per run),
 * given the active PR runs of the whole installation; undefined when it may (pure). The answer
 * names what is running and when to retry.
 */
export function quotaProblem(input: {
  quotas: Quotas;
  active: readonly PrRun[];
  target: { installationId: number; owner: string; repo: string; pr: number };
  newRuns: number;
  iterations: number;
  clusters: number;
  /** Clusters under test each new run holds at once (its arms × clusters per arm). */
  runClusters?: number;
  publicUrl: string;
}): string | undefined {
  const { quotas, target, newRuns } = input;
  const size = newRuns * input.iterations * input.clusters;
  if (size > quotas.requestIterations) {
    return `asks for ${newRuns} arch(es) × ${input.iterations} iterations × ${input.clusters} cluster(s) = ${size}; at most ${quotas.requestIterations} per request: ask for fewer iterations or arches`;
  }
  const inInstallation = input.active.filter((r) => r.subject.installationId === target.installationId);
  const inRepository = inInstallation.filter(
    (r) => r.subject.owner === target.owner && r.subject.repo === target.repo,
  );
  const inPullRequest = inRepository.filter((r) => r.subject.pr === target.pr);
  const scopes: [string, readonly PrRun[], number][] = [
    ["this pull request", inPullRequest, quotas.activeRunsPerPullRequest],
    [`${target.owner}/${target.repo}`, inRepository, quotas.activeRunsPerRepository],
    ["this installation", inInstallation, quotas.activeRunsPerInstallation],
  ];
  const listed = (runs: readonly PrRun[]) => {
    const shown = runs
      .slice(0, 6)
      .map(
        (r) => `[${r.subject.repo}#${r.subject.pr} ${r.arch}](${input.publicUrl}/runs/${r.id}) (${r.state})`,
      );
    const more = runs.length > shown.length ? `, and ${runs.length - shown.length} more` : "";
    return `${shown.join(", ")}${more}. Retry when one of them finishes (or abort one with \`/test network-stress abort\`).`;
  };
  for (const [scope, runs, limit] of scopes) {
    if (runs.length + newRuns <= limit) continue;
    return `${scope} has ${runs.length} active run(s), at most ${limit} at once: ${listed(runs)}`;
  }
  const clusterScopes: [string, readonly PrRun[], number | undefined, string][] = [
    ["this pull request", inPullRequest, quotas.clustersPerPullRequest, "NETSTRESS_MAX_CLUSTERS_PER_PR"],
    [
      `${target.owner}/${target.repo}`,
      inRepository,
      quotas.clustersPerRepository,
      "NETSTRESS_MAX_CLUSTERS_PER_REPOSITORY",
    ],
  ];
  const asked = newRuns * (input.runClusters ?? 0);
  for (const [scope, runs, limit, setting] of clusterScopes) {
    if (limit === undefined) continue;
    const held = runs.reduce((sum, r) => sum + runClusters(r), 0);
    if (held + asked <= limit) continue;
    return (
      `${scope} would hold ${held + asked} clusters under test at once (${asked} for this request, ${held} for its active runs), ` +
      `at most ${limit} (${setting}): ${runs.length > 0 ? listed(runs) : "ask for fewer clusters, arches or arms."}`
    );
  }
  return undefined;
}
