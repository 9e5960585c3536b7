import type { Logger } from "pino";
import type { LeaseKeeper } from "@netstress/core/kube/lease-keeper.ts";
import type {
  ActiveRuns,
  ClusterLease,
  ClusterRequest,
  ProvisionProgress,
} from "../runs/clusters-under-test.ts";
import type { ClusterLeaseKey, ClusterLeases } from "./cluster-leases.ts";
import type { KubeconfigSource, KubeObjects } from "@netstress/core/kube/kube-objects.ts";

/** How often the sources look, and when a cluster counts as lost. */
export interface ClusterTiming {
  /** Hub objects and upgrades are looked at this often while someone waits on them. */
  pollMs: number;
  /** A leased cluster's API is asked this often whether it is still there. */
  healthPollMs: number;
  /** Unanswered health checks in a row that make a cluster lost. */
  lostAfterFailures: number;
}

/** What every source shares: leases, their renewal, API clients, timing. */
export interface SourceContext {
  /** Which bot deployment (its Redis prefix) owns what a source creates. */
  instance: string;
  leases: ClusterLeases;
  keeper: LeaseKeeper<ClusterLeaseKey>;
  connect(name: string, kubeconfig: KubeconfigSource): KubeObjects;
  timing: ClusterTiming;
  logger: Logger;
}

/** A request as one source sees it: the slots (cluster numbers of the arm) still to fill. */
export interface SourceRequest extends ClusterRequest {
  slots: readonly number[];
  /** Static sources: whether a cluster may be moved to the payload. */
  allowUpgrade: boolean;
  /**
   * Whether the arm runs a pull request's code — its payload, its test binaries with cluster-admin
   * (a PR run's PR arm) — rather than released payloads only (gate, baseline and periodic arms).
   */
  prCode: boolean;
  progress(slot: number, phase: ProvisionProgress["phase"], detail?: string): void;
}

export interface SourceLease extends ClusterLease {
  slot: number;
}

/**
 * One configured source. It fills what slots it can; `why` tells the operator why it filled no
 * more, `reason` the same in short for anyone (no Secret, namespace or object names).
 */
export interface ClusterSource {
  readonly name: string;
  acquire(request: SourceRequest): Promise<{ leases: SourceLease[]; why?: string; reason?: string }>;
  /**
   * Gives back what runs that are not active hold; returns how many clusters that freed. What is
   * held is read before `activeRuns` is asked, never after (see ClusterProvider.reconcile).
   */
  reconcile(activeRuns: ActiveRuns): Promise<number>;
  /**
   * Whether the source still holds this quota slot itself: for objects that are deleted but not
   * yet gone (Hive tearing a cluster down); it gives the slot back once they are.
   */
  keeps?(key: ClusterLeaseKey): boolean;
  stop(): void;
}
