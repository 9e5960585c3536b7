import type { Arch } from "@netstress/core/arch/arch.ts";
import type { PayloadCounts } from "../analysis/payload-counts.ts";
import type { ClusterProvider } from "../runs/clusters-under-test.ts";
import type { AnalyzeRunResults } from "../runs/analyze-port.ts";
import type { RunRecord } from "../runs/run-record.ts";
import type { ShardExecutor } from "../runs/shard-executor.ts";
import type { RunClusters } from "./run-cluster-scope.ts";
import type { RunDeps } from "./run-deps.ts";
import type { RunProgressUpdates } from "./run-progress-updates.ts";
import type { RunSignal } from "./run-signal.ts";

export interface ExecuteStageOptions {
  executor: ShardExecutor;
  /**
   * The source of the clusters under test each arm runs on (its payload on the run's arch), asked
   * per run: undefined (or absent) while none is configured, and every iteration runs against the
   * executor's own cluster under test, or none.
   */
  clusters?: () => ClusterProvider | undefined;
  analyze: AnalyzeRunResults;
  /**
   * The history store, read by the bot alone: a crossover by upgrade reads its baseline payload's
   * history on its release stream and arch before its first batch. Absent: no run reads it.
   */
  history?: { readPayloadHistory(input: { stream: string; arch: Arch }): Promise<PayloadCounts[]> };
  /** Runs live under <dataDir>/runs/<run id>/. */
  dataDir: string;
  /** The bot's address: the report links the run's artifacts there (absent: from the host's root). */
  publicUrl?: string;
  /** At most one progress update of a check run per interval. */
  progressIntervalMs?: number;
  testTimeoutMs?: number;
  retries?: number;
  /**
   * Aborted when this process stops: executions stop, but the run is not concluded, so that the
   * job, found stalled, resumes on the next worker.
   */
  shutdown?: AbortSignal;
}

/** What every step of one run's execute stage works with. */
export interface ExecuteContext {
  deps: RunDeps;
  runId: string;
  /** The run as it started (this time): its source, options and plan. */
  started: RunRecord;
  options: ExecuteStageOptions;
  /** What every shard of the run is given: the per-test timeout, reruns of a failed test. */
  shardSettings: { testTimeoutMs: number; retries: number };
  stop: RunSignal;
  progress: RunProgressUpdates;
  clusters: RunClusters;
}
