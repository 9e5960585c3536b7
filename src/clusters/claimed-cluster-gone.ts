import { NetstressError } from "@netstress/core/errors/netstress-error.ts";

/**
 * Hive took a claimed cluster from the run that held it: the claim's effective lifetime ended (Hive
 * deletes the claim and its cluster then), or its ClusterDeployment was deleted under the claim.
 * The run's iterations on it count as on a lost cluster, with this as the reason.
 */
export class ClaimedClusterGone extends NetstressError<"claimed-cluster-gone"> {
  override readonly name = "ClaimedClusterGone";

  constructor(message: string) {
    super(message, { code: "claimed-cluster-gone" });
  }
}
