import type { Arch } from "@netstress/core/arch/arch.ts";
import type { Arm } from "@netstress/core/model/result-record.ts";
import { ClustersUnavailableError } from "../runs/clusters-unavailable-error.ts";
import type {
  ClusterLease,
  ClusterProvider,
  ProvisionProgress,
  RunClusterRequest,
} from "../runs/clusters-under-test.ts";

export interface HeldLeases {
  byArm: Partial<Record<Arm, ClusterLease[]>>;
  /** Gives every lease back (each once, whatever fails); returns the ids given back. */
  releaseAll(): Promise<string[]>;
}

/**
 * Acquires `count` clusters for every arm at once (so that the same cloud weather hits both arms,
 * and the run's whole need of a quota is reserved in one step), each running its arm's payload.
 * When any arm cannot get its clusters, or the signal stops the wait, the provider gives back
 * whatever the others got before this throws.
 */
export async function acquireClusters(input: {
  provider: ClusterProvider;
  runId: string;
  arch: Arch;
  arms: readonly {
    arm: Arm;
    payload: string | undefined;
    upgradeTarget?: string | undefined;
    moves?: boolean;
  }[];
  count: number;
  /** See RunClusterRequest.firstSlot. */
  firstSlot?: number;
  /** Gates and periodics are served before PR runs when a quota is full. */
  kind?: RunClusterRequest["kind"];
  signal: AbortSignal;
  onProgress?: (progress: ProvisionProgress) => void;
  onReleaseError?: (error: unknown, lease: ClusterLease) => void;
}): Promise<HeldLeases> {
  const arms = input.arms.map(({ arm, payload, upgradeTarget, moves }) => {
    if (!payload) {
      throw new ClustersUnavailableError(
        `the run names no payload for its ${arm} arm, and clusters under test run a payload (configure payload)`,
      );
    }
    return { arm, payload, ...(upgradeTarget ? { upgradeTarget } : {}), ...(moves ? { moves } : {}) };
  });
  const byArm = await input.provider.acquire({
    runId: input.runId,
    arch: input.arch,
    arms,
    count: input.count,
    ...(input.firstSlot !== undefined ? { firstSlot: input.firstSlot } : {}),
    ...(input.kind ? { kind: input.kind } : {}),
    signal: input.signal,
    ...(input.onProgress ? { onProgress: input.onProgress } : {}),
  });
  let leases = Object.values(byArm).flat();
  return {
    byArm,
    async releaseAll() {
      const releasing = leases;
      leases = [];
      await Promise.all(
        releasing.map((lease) =>
          lease.release().catch((error: unknown) => input.onReleaseError?.(error, lease)),
        ),
      );
      return releasing.map((l) => l.cluster.id);
    },
  };
}
