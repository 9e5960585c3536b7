import type { Arch } from "../arch/arch.ts";
import type { Arm } from "../runner/result-record.ts";
import { ClustersUnavailableError } from "../runs/clusters-unavailable-error.ts";
import type { ClusterLease, ClusterProvider, ProvisionProgress } from "../runs/clusters-under-test.ts";

export interface HeldLeases {
  byArm: Partial<Record<Arm, ClusterLease[]>>;
  /** Gives every lease back (each once, whatever fails); returns the ids given back. */
  releaseAll(): Promise<string[]>;
}

/**
 * Acquires `count` clusters for every arm at once (so that the same cloud weather hits both arms),
 * each running its arm's payload. When any arm cannot get its clusters, or the signal stops the
 * wait, whatever the other arms got is given back before this throws.
 */
export async function acquireClusters(input: {
  provider: ClusterProvider;
  runId: string;
  arch: Arch;
  arms: readonly { arm: Arm; payload: string | undefined }[];
  count: number;
  signal: AbortSignal;
  onProgress?: (progress: ProvisionProgress) => void;
  onReleaseError?: (error: unknown, lease: ClusterLease) => void;
}): Promise<HeldLeases> {
  const { provider } = input;
  const settled = await Promise.allSettled(
    input.arms.map(async ({ arm, payload }) => {
      if (!payload) {
        throw new ClustersUnavailableError(
          `the run names no payload for its ${arm} arm, and clusters under test run a payload (configure payload)`,
        );
      }
      const leases = await provider.acquire({
        runId: input.runId,
        arm,
        arch: input.arch,
        payload,
        count: input.count,
        signal: input.signal,
        ...(input.onProgress ? { onProgress: input.onProgress } : {}),
      });
      return [arm, leases] as const;
    }),
  );
  const got = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const held: HeldLeases = {
    byArm: Object.fromEntries(got),
    async releaseAll() {
      const leases = got.flatMap(([, l]) => l);
      got.length = 0;
      await Promise.all(
        leases.map((lease) =>
          lease.release().catch((error: unknown) => input.onReleaseError?.(error, lease)),
        ),
      );
      return leases.map((l) => l.cluster.id);
    },
  };
  const failed = settled.find((s) => s.status === "rejected");
  if (failed) {
    await held.releaseAll();
    throw failed.reason;
  }
  return held;
}
