import type { ApiStats } from "./api-server.ts";
import { HiveController, type ClusterFor, type DeploymentRef, type HiveFaults } from "./hive-controller.ts";
import { SimError } from "./sim-error.ts";
import { startFakeKubeApi, type FakeKubeApi } from "./start-fake-kube-api.ts";
import { startSimulatedCluster, type SimulatedCluster } from "./start-simulated-cluster.ts";

export type { ClusterFor, ClusterSpec, DeploymentRef, FaultSelector, HiveFaults } from "./hive-controller.ts";

export interface FakeHive {
  /** The hub: an HTTPS API serving Hive's kinds, with the controller acting on them. */
  hub: FakeKubeApi;
  /** The hub's API calls (what the bot cost it) and the controller's installs. */
  stats: {
    api: ApiStats;
    installsStarted: number;
    installsFailed: number;
    clustersStarted: number;
    clustersStopped: number;
    clustersRunning: number;
  };
  /** The simulated cluster a ClusterDeployment installed, while it runs. */
  clusterOf(deployment: DeploymentRef): SimulatedCluster | undefined;
  /** Every cluster installed and not lost or deleted. */
  clusters(): SimulatedCluster[];
  /** Stops a running cluster mid-run: its API stops answering and its deployment turns Unreachable. */
  loseCluster(deployment: DeploymentRef): Promise<void>;
  setFaults(faults: HiveFaults): void;
  /** Stops every cluster, the controller and (when it started it) the hub. */
  stop(): Promise<void>;
}

/**
 * OpenShift Hive, simulated on a hub API (`hub`, or a fresh HTTPS one): ClusterDeployments install
 * simulated clusters of their release image and arch in `installMs`, ClusterPools keep their size
 * (more for waiting claims) and hibernate unclaimed clusters, ClusterClaims get a pool's cluster
 * (readable by the claim's subjects only), deletion and lifetimes give clusters back through Hive's
 * finalizers after `teardownMs` (Hive durations × `timeScale`), with faults (failed installs,
 * installs that never finish, release images that fail verification, clusters lost) — see
 * HiveController. `clusterFor` says what each cluster runs besides its payload (its version and
 * component builds, read from the payload by the caller); by default nothing.
 */
export async function startFakeHive(
  options: {
    hub?: FakeKubeApi;
    installMs?: number;
    /** A deleted deployment's deprovision time, before it (and its claim) is gone (default 0). */
    teardownMs?: number;
    /** A hibernating cluster's time to resume (default installMs / 4). */
    resumeMs?: number;
    /** HiveConfig's deleteProtection: deployments get hive.openshift.io/protected-delete "true" unless they say otherwise. */
    protectedDelete?: boolean;
    clusterFor?: ClusterFor;
    faults?: HiveFaults;
    timeScale?: number;
    random?: () => number;
  } = {},
): Promise<FakeHive> {
  const installMs = options.installMs ?? 1000;
  if (!Number.isFinite(installMs) || installMs < 0) {
    throw new SimError(
      `installMs is the time a simulated install takes, a number of milliseconds ≥ 0, not ${String(options.installMs)}`,
    );
  }
  const teardownMs = options.teardownMs ?? 0;
  const resumeMs = options.resumeMs ?? installMs / 4;
  for (const [what, value] of [
    ["teardownMs", teardownMs],
    ["resumeMs", resumeMs],
  ] as const) {
    if (!Number.isFinite(value) || value < 0)
      throw new SimError(`${what} is a number of milliseconds ≥ 0, not ${String(value)}`);
  }
  const timeScale = options.timeScale ?? 1;
  if (!Number.isFinite(timeScale) || timeScale <= 0) {
    throw new SimError(
      `timeScale multiplies Hive's durations (lifetimes, delete-after): a number > 0, not ${String(options.timeScale)}`,
    );
  }
  const hub =
    options.hub ??
    (await startFakeKubeApi({
      tls: true,
      name: "hive-hub",
      nodes: [
        {
          name: "hub-master-0",
          labels: { "kubernetes.io/arch": "amd64", "node-role.kubernetes.io/control-plane": "" },
        },
      ],
    }));
  const controller = new HiveController(hub.store, {
    installMs,
    teardownMs,
    resumeMs,
    protectedDelete: options.protectedDelete ?? false,
    timeScale,
    clusterFor: options.clusterFor ?? (() => ({})),
    startCluster: (cluster) => startSimulatedCluster(cluster),
    faults: options.faults ?? {},
    random: options.random ?? Math.random,
  });
  return {
    hub,
    get stats() {
      return { api: hub.stats, ...controller.counts, clustersRunning: controller.clusters().length };
    },
    clusterOf: (deployment) => controller.clusterOf(deployment),
    clusters: () => controller.clusters(),
    loseCluster: (deployment) => controller.loseCluster(deployment),
    setFaults: (faults) => controller.setFaults(faults),
    async stop() {
      await controller.stop();
      if (!options.hub) await hub.stop();
    },
  };
}
