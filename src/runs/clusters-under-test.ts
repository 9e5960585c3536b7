// src/runs/clusters-under-test.ts
import type { Arch } from "@netstress/core/arch/arch.ts";
import type { Arm } from "@netstress/core/model/result-record.ts";

/** A cluster an arm's iterations run against; `id` is stable (`<source>/<name>`), shown in reports. */
export interface ClusterUnderTest {
  id: string;
  source: string;
  arch: Arch;
  /** The payload it runs, a pullspec by digest, read from its ClusterVersion (never assumed). */
  payload: string;
  /** Its admin kubeconfig, read on use: never stored in job data, Redis, logs or check runs. */
  kubeconfig(): Promise<string>;
}

export interface ProvisionProgress {
  arm: Arm;
  arch: Arch;
  wanted: number;
  ready: number;
  /** queued: waiting for the source's quota; installing/upgrading: on its way; ready: all there. */
  phase: "queued" | "installing" | "upgrading" | "ready";
  since: string;
  detail?: string;
}

export interface ClusterLease {
  cluster: ClusterUnderTest;
  /** Aborted when the source sees the cluster lost (unreachable, deleted): its iterations rerun elsewhere. */
  lost: AbortSignal;
  /**
   * When the source ends the cluster's life, in ms since the epoch (a Hive claim's effective
   * lifetime): it is lost then, and no iteration that could outlast it is started on it.
   */
  expiresAt?: number;
  /** Gives the cluster back (delete claim/deployment, free a static lease); idempotent. */
  release(): Promise<void>;
  /**
   * Moves the cluster to `payload` (its ClusterVersion's desiredUpdate) and resolves once it runs
   * it; throws ClustersUnavailableError when the upgrade is refused or not done in the source's
   * upgradeSeconds. Absent where its source may not move it (a static cluster without upgrade: true).
   */
  upgrade?(payload: string, signal: AbortSignal): Promise<void>;
}

export interface ClusterRequest {
  runId: string;
  arm: Arm;
  arch: Arch;
  /** The arm's payload, a pullspec by digest. */
  payload: string;
  /**
   * An upgrade run's: the arm's own payload, which its [Upgrade] tests move the clusters to from
   * `payload` (their start). A lease accepts either; only a cluster running neither is lost.
   */
  upgradeTarget?: string;
  /**
   * The run moves the clusters to `upgradeTarget` itself (crossover by upgrade, see
   * ClusterLease.upgrade): only clusters their source may move serve it.
   */
  moves?: boolean;
  count: number;
  signal: AbortSignal;
  onProgress?: (progress: ProvisionProgress) => void;
}

/**
 * A run's clusters: every arm's at once, so that its whole need of a source's quota is reserved in
 * one step (a run never holds part of it while waiting for the rest).
 */
export interface RunClusterRequest {
  runId: string;
  arch: Arch;
  /** Each arm with its payload, a pullspec by digest (and, in an upgrade run, its target: see ClusterRequest). */
  arms: readonly { arm: Arm; payload: string; upgradeTarget?: string; moves?: boolean }[];
  /** Clusters per arm. */
  count: number;
  /**
   * The number of the arm's first cluster (default 0): a run that asks for more clusters while it
   * holds some (crossover by upgrade, new ones each batch) numbers them after those; a resumed run
   * asking for the same numbers again adopts the clusters it had.
   */
  firstSlot?: number;
  /** Gates and periodics are served before PR runs when a quota is full (default: pr). */
  kind?: "pr" | "gate" | "periodic";
  signal: AbortSignal;
  onProgress?: (progress: ProvisionProgress) => void;
}

/** The ids of the runs that are still going, read from the run store when asked. */
export type ActiveRuns = () => Promise<ReadonlySet<string>>;

export type ArmLeases = Partial<Record<Arm, ClusterLease[]>>;

/**
 * Hands out clusters of arch A running payload P and takes them back. Throws ClustersUnavailableError
 * (an infrastructure problem, never a test failure) when it cannot, with the reason for the reader.
 */
export interface ClusterProvider {
  readonly name: string;
  /** Every arm's `count` clusters, or none (what was had is given back before it throws). */
  acquire(request: RunClusterRequest): Promise<ArmLeases>;
  /**
   * Whether some cluster it may hand out may also be moved to another payload (ClusterLease.upgrade):
   * what crossover by upgrade needs. Absent: none may.
   */
  movesClusters?(): boolean;
  /**
   * The most clusters one run may hold at once of those that may be moved: the largest quota
   * (Hive `maxClusters`) or count (static clusters with upgrade: true) of such a source. A
   * crossover plans its batches within it, or would wait for quota its own clusters hold.
   */
  movableAtOnce?(): number;
  /**
   * Start-up reconciliation: gives back what runs that are no longer active hold. It looks at what
   * is held before it asks `activeRuns` (the run store's snapshot), so that a run that takes a
   * cluster while the snapshot is being taken keeps it.
   */
  reconcile(activeRuns: ActiveRuns): Promise<{ released: number }>;
}
