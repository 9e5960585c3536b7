import type { Arch } from "@netstress/core/arch/arch.ts";
import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import type { Arm, ResultRecord } from "@netstress/core/model/result-record.ts";
import type { RunProgress } from "../runner/run-plan.ts";
import type { ClusterLease } from "./clusters-under-test.ts";

/**
 * What a stress run hands its executor: its own iterations of its arms on one architecture. The
 * executor runs them where it can (this machine, a build-farm cluster of that arch) and knows
 * nothing about who asked.
 */
export interface Shard {
  runId: string;
  /** Unique and stable within the run, usable in resource names: `<arch>-<first>-<last>`. */
  id: string;
  arch: Arch;
  arms: Arm[];
  /** Iteration numbers first … first + count - 1 of the run. */
  iterations: { first: number; count: number };
  /** The binaries per arm; holds only the arms of this shard. */
  plan: ExecutionPlan;
  seed: string;
  /**
   * Build-farm capabilities the shard needs beyond its arch. The local executor has no clusters to
   * choose from and runs it where it runs everything.
   */
  capabilities?: string[];
  focus?: string;
  /** Tests running at once. */
  parallel: number;
  /** Network tests running at once (at most `parallel`); absent: `parallel`. */
  networkParallel?: number;
  /** Per-test timeout. */
  testTimeoutMs: number;
  /** Reruns of a failed test inside its iteration. */
  retries: number;
}

export interface ExecuteShardInput {
  shard: Shard;
  /**
   * Where the shard's results.jsonl (the runner's record format) must be when execute returns, whole:
   * the same directory for every execution of the shard (a restarted worker goes on with what is
   * collected there), so a file written in place could be read half written by another execution.
   */
  outDir: string;
  /**
   * Aborted on user abort, supersession, the run's deadline or shutdown (possibly already, when
   * execute is called); the executor stops promptly and reports "cancelled".
   */
  signal: AbortSignal;
  /**
   * The clusters under test per arm, each running its arm's payload, when a cluster source serves
   * the run: an arm's iterations spread over them round-robin by iteration number, and a lost one's
   * iterations rerun on another. Absent: the executor's own (a configured cluster, or none).
   */
  clusters?: Partial<Record<Arm, ClusterLease[]>>;
  onRecord?: (record: ResultRecord) => void;
  onProgress?: (progress: RunProgress) => void;
}

/** An iteration the infrastructure kept losing (evictions, OOM kills …) past its retries. */
export interface LostIteration {
  iteration: number;
  /** Every attempt's loss, for the report. */
  reason: string;
}

export type ShardOutcome =
  /**
   * Every execution ran; results.jsonl is complete. Iterations in `lost` are not in it: the
   * infrastructure kept losing them, and the rest of the shard still counts.
   */
  | {
      status: "completed";
      resultsPath: string;
      records: number;
      lost?: LostIteration[];
      /**
       * Every arm ran in pods of its own, against clusters under test of its own: nothing the PR
       * arm ran could reach the baseline arm's tests, results or credentials (see the history
       * pool's rule in createRunAnalyzer).
       */
      armsIsolated?: boolean;
    }
  /** Stopped by the signal; results.jsonl holds what finished. */
  | { status: "cancelled"; resultsPath: string; records: number }
  /** Could not run (bad binary, lost pod …): an infrastructure problem, never a test failure. */
  | { status: "failed"; reason: string };

/** The execution port: the embedded local executor and the build-farm executor implement it. */
export interface ShardExecutor {
  /** Shown in check runs and logs ("local", "farm"). */
  readonly name: string;
  /** The architectures it can run now; a run for another one concludes action_required. */
  arches(): Promise<readonly Arch[]>;
  execute(input: ExecuteShardInput): Promise<ShardOutcome>;
  /**
   * Takes the shared capacity of the shard's first `jobs` iterations (waiting while it is in use),
   * which its execute then uses: a run asks for clusters under test only once their iterations
   * can start. Absent: the executor shares no capacity (it runs on this machine).
   */
  reserveCapacity?(input: { shard: Shard; jobs: number; signal: AbortSignal }): Promise<CapacityReservation>;
}

/** Capacity held for a shard; release() gives back what its execute did not use (idempotent). */
export interface CapacityReservation {
  release(): Promise<void>;
}

/** Shard ids are `<arch>-<first>-<last>`, the same for every executor (and its Jobs' names). */
export function shardId(arch: Arch, iterations: { first: number; count: number }): string {
  return `${arch}-${iterations.first}-${iterations.first + iterations.count - 1}`;
}
