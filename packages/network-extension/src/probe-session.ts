import { randomBytes } from "node:crypto";
import { collectDisruption } from "./collect-disruption.ts";
import { deployProbes, type ProbeDeployment } from "./deploy-probes.ts";
import type { Disruption } from "@netstress/core/model/disruption-schema.ts";
import type { ExtSettings } from "./ext-settings.ts";
import type { Connection, NetworkPath } from "@netstress/core/model/network-paths.ts";
import type { ProbeCluster } from "./probe-cluster.ts";

export interface ProbeSessionOutcome {
  disruption: Disruption[] | undefined;
  /** Why the session could not say everything: setup failed, a checker vanished, the action failed. */
  problems: string[];
  /** What the action said it did. */
  notes: string[];
}

/**
 * Probe pods in a namespace of their own (`netstress-probes-<random>`) for the paths asked for,
 * `during` run while they probe, then what they saw collected and the namespace deleted — on
 * every way out, SIGTERM included (`signal`). `during` returns notes, or throws what went wrong.
 */
export async function runProbeSession(options: {
  cluster: ProbeCluster;
  paths: ReadonlySet<`${NetworkPath}/${Connection}`>;
  settings: ExtSettings;
  signal: AbortSignal;
  log: (line: string) => void;
  during: (deployment: ProbeDeployment) => Promise<string[]>;
}): Promise<ProbeSessionOutcome> {
  const { cluster, settings, log } = options;
  const namespace = `netstress-probes-${randomBytes(3).toString("hex")}`;
  const problems: string[] = [];
  const notes: string[] = [];
  let disruption: Disruption[] | undefined;
  let deployment: ProbeDeployment | undefined;
  try {
    deployment = await deployProbes({
      cluster,
      namespace,
      paths: options.paths,
      settings,
      signal: options.signal,
      log,
    });
    log(
      `probing ${deployment.expected.length} probe pair(s) from ${deployment.checkers.length} pod(s) in ${namespace}`,
    );
    try {
      notes.push(...(await options.during(deployment)));
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
    }
    const collected = await collectDisruption({
      cluster,
      deployment,
      window: { from: deployment.checkingSince, to: new Date() },
      budgetSeconds: settings.budgetSeconds,
    });
    disruption = collected.disruption;
    problems.push(...collected.problems);
  } catch (error) {
    problems.push(error instanceof Error ? error.message : String(error));
  } finally {
    await removeProbes({ cluster, namespace, log }).catch((error: Error) =>
      problems.push(`could not delete the probe namespace ${namespace}: ${error.message}`),
    );
  }
  return { disruption, problems, notes };
}

/** Deletes the probe pods (the namespace's deletion alone leaves pods running on some servers) and the namespace. */
async function removeProbes(options: {
  cluster: ProbeCluster;
  namespace: string;
  log: (line: string) => void;
}) {
  const { cluster, namespace } = options;
  if (!(await cluster.namespaceExists(namespace))) return;
  const pods = await cluster.listPods(namespace, "");
  await Promise.all(pods.map((p) => cluster.deletePod(namespace, p.name)));
  await cluster.deleteNamespace(namespace);
  options.log(`deleted the probe namespace ${namespace}`);
}
