import type { Arm } from "@netstress/core/model/result-record.ts";
import { ClustersUnavailableError } from "../../src/runs/clusters-unavailable-error.ts";
import type {
  ClusterLease,
  ClusterProvider,
  ClusterRequest,
  ProvisionProgress,
} from "../../src/runs/clusters-under-test.ts";

export interface TestClusterProvider extends ClusterProvider {
  /** Every request, one per arm, as asked. */
  requests: ClusterRequest[];
  /** Leases handed out and not given back, by cluster id. */
  held(): string[];
  /** Every lease handed out, by cluster id. */
  handedOut(): string[];
  /** Marks a cluster lost, as its source would on seeing it gone. */
  lose(id: string, reason?: string): void;
}

/**
 * A cluster source over given kubeconfig texts: `clusters` per arm (the arm's payload is what the
 * request asked for). `installMs` each acquire waits (reporting "installing" then "ready"), aborted
 * by the request's signal; `refuse` names arms whose requests fail as the quota would.
 */
export function testClusterProvider(options: {
  kubeconfig: (id: string) => string;
  installMs?: number;
  refuse?: Partial<Record<Arm, string>>;
}): TestClusterProvider {
  const requests: ClusterRequest[] = [];
  const held = new Map<string, AbortController>();
  const handedOut: string[] = [];
  let next = 0;
  return {
    name: "test",
    requests,
    held: () => [...held.keys()],
    handedOut: () => [...handedOut],
    lose(id, reason = "the cluster stopped answering") {
      held.get(id)?.abort(reason);
    },
    // All or nothing, as the provider's contract says: a refused arm gives the others' clusters back.
    async acquire(run) {
      const settled = await Promise.allSettled(
        run.arms.map(async ({ arm, payload }) => [arm, await acquireArm({ ...run, arm, payload })] as const),
      );
      const got = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
      const failed = settled.find((s) => s.status === "rejected");
      if (failed) {
        await Promise.all(got.flatMap(([, leases]) => leases.map((l) => l.release())));
        throw failed.reason;
      }
      return Object.fromEntries(got);
    },
    async reconcile() {
      return { released: 0 };
    },
  };

  async function acquireArm(request: ClusterRequest): Promise<ClusterLease[]> {
    requests.push(request);
    const progress = (phase: ProvisionProgress["phase"], ready: number) =>
      request.onProgress?.({
        arm: request.arm,
        arch: request.arch,
        wanted: request.count,
        ready,
        phase,
        since: new Date().toISOString(),
      });
    const refused = options.refuse?.[request.arm];
    if (refused) {
      progress("queued", 0);
      throw new ClustersUnavailableError(refused, { reason: refused });
    }
    progress("installing", 0);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, options.installMs ?? 0);
      request.signal.addEventListener(
        "abort",
        () => {
          clearTimeout(timer);
          reject(request.signal.reason);
        },
        { once: true },
      );
    });
    progress("ready", request.count);
    return Array.from({ length: request.count }, (): ClusterLease => {
      const id = `test/${request.arm}-${next++}`;
      const lost = new AbortController();
      held.set(id, lost);
      handedOut.push(id);
      return {
        cluster: {
          id,
          source: "test",
          arch: request.arch,
          payload: request.payload,
          kubeconfig: async () => options.kubeconfig(id),
        },
        lost: lost.signal,
        release: async () => {
          held.delete(id);
        },
      };
    });
  }
}
