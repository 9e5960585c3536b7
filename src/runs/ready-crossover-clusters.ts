import { ClustersUnavailableError } from "./clusters-unavailable-error.ts";

/**
 * A crossover batch's clusters made ready at once: `fresh` new ones on the baseline payload for its
 * baseline half, and the clusters its PR half runs on (`upgrade`, by id) moved to the PR payload.
 * A cluster whose upgrade the cluster source could not complete (ClustersUnavailableError: refused,
 * timed out) is handed to `failed` — which gives it back and tells why — and the half goes on with
 * the others; any other error is thrown.
 */
export async function readyCrossoverClusters<Cluster>(input: {
  fresh: number;
  upgrade: readonly string[];
  acquire(count: number): Promise<Cluster[]>;
  upgradeCluster(id: string): Promise<Cluster>;
  failed(id: string, error: ClustersUnavailableError): Promise<void>;
}): Promise<{ baseline: Cluster[]; pr: Cluster[] }> {
  // Both are waited for, whichever fails: nothing goes on in the background once this returns.
  const [acquired, upgraded] = await Promise.allSettled([
    input.fresh > 0 ? input.acquire(input.fresh) : Promise.resolve([]),
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
  if (upgraded.status === "rejected") throw upgraded.reason;
  return { baseline: acquired.value, pr: upgraded.value.flat() };
}
