import { ClustersUnavailableError } from "./clusters-unavailable-error.ts";

/**
 * A crossover batch's clusters made ready at once: `fresh` new ones on the baseline payload for its
 * baseline half, and the clusters its PR half runs on: `freshPr` new ones on the PR payload (those
 * a history payload stands against) and those it moved there (`upgrade`, by id).
 * A cluster whose upgrade the cluster source could not complete (ClustersUnavailableError: refused,
 * timed out) is handed to `failed` — which gives it back and tells why — and the half goes on with
 * the others; any other error is thrown.
 */
export async function readyCrossoverClusters<Cluster>(input: {
  fresh: number;
  freshPr?: number;
  upgrade: readonly string[];
  acquire(count: number, arm: "baseline" | "pr"): Promise<Cluster[]>;
  upgradeCluster(id: string): Promise<Cluster>;
  failed(id: string, error: ClustersUnavailableError): Promise<void>;
}): Promise<{ baseline: Cluster[]; pr: Cluster[] }> {
  // Both are waited for, whichever fails: nothing goes on in the background once this returns.
  const freshPr = input.freshPr ?? 0;
  const [acquired, acquiredPr, upgraded] = await Promise.allSettled([
    input.fresh > 0 ? input.acquire(input.fresh, "baseline") : Promise.resolve([]),
    freshPr > 0 ? input.acquire(freshPr, "pr") : Promise.resolve([]),
    Promise.all(
      input.upgrade.map(async (id) => {
        try {
          return [await input.upgradeCluster(id)];
        } catch (error) {
          if (!(error instanceof ClustersUnavailableError)) throw error;
          await input.failed(id, error);
          return [];
        }
      }),
    ),
  ]);
  if (acquired.status === "rejected") throw acquired.reason;
  if (acquiredPr.status === "rejected") throw acquiredPr.reason;
  if (upgraded.status === "rejected") throw upgraded.reason;
  return { baseline: acquired.value, pr: [...acquiredPr.value, ...upgraded.value.flat()] };
}
