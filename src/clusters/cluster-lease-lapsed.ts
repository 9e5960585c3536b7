import { NetstressError } from "@netstress/core/errors/netstress-error.ts";
import type { ClusterLeaseKey } from "./cluster-leases.ts";

/**
 * A cluster lease whose renewals lapsed (the replica stalled, Redis was unreachable or lost its
 * data): another run may hold the cluster by now, so the holder must stop using it — its
 * iterations count as on a lost cluster.
 */
export class ClusterLeaseLapsed extends NetstressError<"cluster-lease-lapsed"> {
  override readonly name = "ClusterLeaseLapsed";
  readonly lease: ClusterLeaseKey;

  constructor(lease: ClusterLeaseKey) {
    super(
      `the lease of run ${lease.runId} (${lease.holder}) on ${lease.pool} lapsed before it was renewed; another run may hold it now`,
      { code: "cluster-lease-lapsed" },
    );
    this.lease = lease;
  }
}
