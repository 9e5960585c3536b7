import { computeDisruption } from "./compute-disruption.ts";
import type { Disruption } from "@netstress/core/model/disruption-schema.ts";
import type { ProbeDeployment } from "./deploy-probes.ts";
import type { ProbeCluster } from "./probe-cluster.ts";
import { parseProbeLines, type ProbeStateLine } from "./probe-line.ts";

/**
 * Reads what the probe pods saw (their logs, through the API) and turns it into disruption per
 * path over the window. A checker whose log cannot be read leaves its pairs unreported, so they
 * count as failing for the whole window, and `problems` says why.
 */
export async function collectDisruption(options: {
  cluster: ProbeCluster;
  deployment: ProbeDeployment;
  window: { from: Date; to: Date };
  budgetSeconds: number;
}): Promise<{ disruption: Disruption[]; problems: string[] }> {
  const { cluster, deployment } = options;
  const problems: string[] = [];
  const lines: ProbeStateLine[] = [];
  await Promise.all(
    deployment.checkers.map(async (name) => {
      const log = await cluster.podLog(deployment.namespace, name).catch((error: Error) => {
        problems.push(`cannot read the log of probe pod ${name}: ${error.message}`);
        return undefined;
      });
      if (log === undefined) return void problems.push(`probe pod ${name} is gone: its probes are unknown`);
      for (const line of parseProbeLines(log)) if (line.event === "state") lines.push(line);
    }),
  );
  return {
    disruption: computeDisruption({
      expected: deployment.expected,
      lines,
      window: options.window,
      budgetSeconds: options.budgetSeconds,
    }),
    problems,
  };
}
