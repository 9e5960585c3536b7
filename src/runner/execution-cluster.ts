import type { PlanCluster } from "./execution-plan.ts";
import type { Arm } from "./result-record.ts";
import { RunnerError } from "./runner-error.ts";

/** A cluster under test as the runner sees it: what to name it, and where its kubeconfig file is. */
export interface ExecutionCluster {
  /** Written as `cluster` on each record (`<source>/<name>`). */
  id: string;
  /** The payload it runs (a pullspec by digest), written as `payload` on each record. */
  payload: string;
  /** Path of its kubeconfig file: the test process gets KUBECONFIG=<this>, never the file's text. */
  kubeconfig: string;
  /** Aborted when the cluster is lost: executions on it stop and run again on another cluster. */
  lost?: AbortSignal;
}

/** Which cluster an execution of one arm's iteration runs against, asked at each attempt. */
export type ClusterChooser = (execution: { arm: Arm; iteration: number }) => ExecutionCluster;

/**
 * Spreads an arm's iterations over its clusters round-robin by iteration number: iteration i runs
 * on cluster i mod n, or — when that one is lost — on the next one that is not. Throws when every
 * cluster of the arm is lost (the infrastructure's fault, never a test's).
 */
export function roundRobinClusters(byArm: Partial<Record<Arm, readonly ExecutionCluster[]>>): ClusterChooser {
  return ({ arm, iteration }) => {
    const clusters = byArm[arm] ?? [];
    if (clusters.length === 0) throw new RunnerError(`the ${arm} arm has no cluster under test`);
    for (let k = 0; k < clusters.length; k++) {
      const cluster = clusters[(iteration + k) % clusters.length]!;
      if (!cluster.lost?.aborted) return cluster;
    }
    throw new RunnerError(
      `every cluster of the ${arm} arm was lost (${clusters.map((c) => c.id).join(", ")})`,
    );
  };
}

/** The clusters a plan names, by arm, as roundRobinClusters takes them. */
export function clustersByArm(clusters: readonly PlanCluster[]): Partial<Record<Arm, ExecutionCluster[]>> {
  const byArm: Partial<Record<Arm, ExecutionCluster[]>> = {};
  for (const { arm, id, payload, kubeconfig } of clusters)
    (byArm[arm] ??= []).push({ id, payload, kubeconfig });
  return byArm;
}
