import type { PlanCluster } from "@netstress/core/model/execution-plan.ts";
import type { Arm } from "@netstress/core/model/result-record.ts";
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
  /** When its source ends its life (ms since the epoch; see ClusterLease.expiresAt). */
  expiresAt?: number;
}

/** Which cluster an execution of one arm's iteration runs against, asked at each attempt. */
export type ClusterChooser = (execution: { arm: Arm; iteration: number }) => ExecutionCluster;

/**
 * Spreads an arm's iterations over its clusters round-robin by iteration number: iteration i runs
 * on cluster i mod n, or — when that one is lost, or its life ends within `needMs` (what one turn on
 * it may take) — on the next one that is not. Throws, saying why of each, when no cluster of the
 * arm is left (the infrastructure's fault, never a test's).
 */
export function roundRobinClusters(
  byArm: Partial<Record<Arm, readonly ExecutionCluster[]>>,
  needMs = 0,
): ClusterChooser {
  return ({ arm, iteration }) => {
    const clusters = byArm[arm] ?? [];
    if (clusters.length === 0) throw new RunnerError(`the ${arm} arm has no cluster under test`);
    const now = Date.now();
    const unusable = (c: ExecutionCluster) =>
      c.lost?.aborted
        ? "lost"
        : c.expiresAt !== undefined && c.expiresAt - now < needMs
          ? `its life ends at ${new Date(c.expiresAt).toISOString()}, within the ${Math.round(needMs / 1000)} s a turn on it may take`
          : undefined;
    for (let k = 0; k < clusters.length; k++) {
      const cluster = clusters[(iteration + k) % clusters.length]!;
      if (!unusable(cluster)) return cluster;
    }
    throw new RunnerError(
      `no cluster of the ${arm} arm is left: ${clusters.map((c) => `${c.id} ${unusable(c)}`).join("; ")}`,
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
