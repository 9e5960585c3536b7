import { changeLeader, findLeader } from "./change-leader.ts";
import type { ExtSettings } from "./ext-settings.ts";
import { judgeDisruption } from "./judge-disruption.ts";
import {
  CONNECTIONS,
  NETWORK_PATHS,
  type Connection,
  type NetworkPath,
} from "@netstress/core/model/network-paths.ts";
import type { NetworkTest } from "./network-tests.ts";
import { oteResult, type OteResultLine } from "./ote-result.ts";
import type { ProbeCluster } from "./probe-cluster.ts";
import { runProbeSession } from "./probe-session.ts";
import { findNodeAgent, restartNodeAgent } from "./restart-node-agent.ts";
import { sameRelease } from "./same-release.ts";
import { upgradeCluster } from "./upgrade-cluster.ts";
import { announceWatching } from "./announce-watching.ts";
import { waitForStop } from "./wait-for-stop.ts";

type PathKey = `${NetworkPath}/${Connection}`;
const EVERY_PATH = new Set<PathKey>(
  NETWORK_PATHS.flatMap((p) => CONNECTIONS.map((c): PathKey => `${p}/${c}`)),
);

/**
 * Runs the tests asked for and emits one result each. Invariants asked for together share one
 * probe deployment (each still its own result, about its own path); the others run one after the
 * other, each with its own probes on every path. A test that cannot apply here is skipped with
 * the reason.
 */
export async function runNetworkTests(options: {
  tests: readonly NetworkTest[];
  cluster: () => Promise<ProbeCluster>;
  settings: ExtSettings;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  log: (line: string) => void;
  emit: (result: OteResultLine) => void;
}): Promise<void> {
  const { tests, settings, signal, log, emit } = options;
  const invariants = tests.filter(
    (t): t is Extract<NetworkTest, { kind: "invariant" }> => t.kind === "invariant",
  );
  const failAll = (list: readonly NetworkTest[], start: Date, error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    for (const t of list)
      emit(
        oteResult({
          name: t.name,
          start,
          end: new Date(),
          result: "failed",
          output: message,
          error: message,
        }),
      );
  };
  let cluster: ProbeCluster;
  try {
    cluster = await options.cluster();
  } catch (error) {
    failAll(tests, new Date(), error);
    return;
  }
  if (invariants.length > 0) {
    const start = new Date();
    const outcome = await runProbeSession({
      cluster,
      paths: new Set(invariants.map((t): PathKey => `${t.path}/${t.connection}`)),
      settings,
      signal,
      log,
      during: async () => {
        await announceWatching(options.env);
        const reason = await waitForStop({ env: options.env, signal });
        return [
          `probed until ${reason === "stop-file" ? "the runner's stop file appeared" : reason === "signal" ? "SIGTERM" : "the invariant duration was over"}`,
        ];
      },
    });
    const end = new Date();
    for (const test of invariants) {
      const own = (outcome.disruption ?? []).filter(
        (d) => d.path === test.path && d.connection === test.connection,
      );
      const verdict = judgeDisruption({ outcome, disruption: own, what: "while the iteration ran" });
      emit(
        oteResult({
          name: test.name,
          start,
          end,
          ...verdict,
          ...(outcome.disruption ? { disruption: own } : {}),
        }),
      );
    }
  }
  for (const test of tests) {
    if (test.kind === "invariant") continue;
    const start = new Date();
    if (signal.aborted) {
      emit(
        oteResult({
          name: test.name,
          start,
          end: start,
          result: "skipped",
          output: "stopped by SIGTERM before it started",
        }),
      );
      continue;
    }
    let skip: string | undefined;
    let during: (nodes: string[]) => Promise<string[]>;
    let what: string;
    try {
      if (test.kind === "agent-restart") {
        const agent = await findNodeAgent(cluster);
        if (!agent)
          skip =
            "no node agent to restart: neither ovnkube-node (openshift-ovn-kubernetes) nor sdn (openshift-sdn) pods run here";
        what = "through the node agent restart";
        during = (nodes) =>
          restartNodeAgent({
            cluster,
            agent: agent!,
            node: nodes[0]!,
            settleMs: settings.settleMs,
            readyTimeoutMs: settings.agentReadyTimeoutMs,
            signal,
          });
      } else if (test.kind === "leader-change") {
        if (!(await findLeader(cluster)))
          skip =
            "the cluster has no control-plane leader lease in openshift-ovn-kubernetes naming an ovnkube-control-plane pod";
        what = "through the control-plane leader change";
        during = () =>
          changeLeader({
            cluster,
            settleMs: settings.settleMs,
            readyTimeoutMs: settings.agentReadyTimeoutMs,
            signal,
          });
      } else {
        const target = settings.upgradeTarget;
        const version = target ? await cluster.clusterVersion() : undefined;
        // A cluster whose history has the target was upgraded by an earlier attempt (a rerun after a
        // lost cluster, a restarted pod): upgrading it again would not start where the run's others did.
        const before = version?.history.find((entry) => sameRelease(entry.image, target!));
        if (!target) skip = "NETSTRESS_UPGRADE_TARGET is not set: name the release pullspec to upgrade to";
        else if (!version) skip = "the cluster has no ClusterVersion to upgrade";
        else if (before)
          skip = `the cluster was upgraded to ${target} already (its ClusterVersion history has it, ${before.state}): an upgrade test upgrades a cluster once`;
        what = "while the cluster upgraded";
        during = () =>
          upgradeCluster({
            cluster,
            target: target!,
            settleMs: settings.settleMs,
            timeoutMs: settings.upgradeTimeoutMs,
            signal,
          });
      }
    } catch (error) {
      failAll([test], start, error);
      continue;
    }
    if (skip) {
      emit(oteResult({ name: test.name, start, end: new Date(), result: "skipped", output: skip }));
      continue;
    }
    const outcome = await runProbeSession({
      cluster,
      paths: EVERY_PATH,
      settings,
      signal,
      log,
      during: (d) => during(d.nodes),
    });
    const disruption = outcome.disruption ?? [];
    const verdict = judgeDisruption({ outcome, disruption, what: what! });
    emit(
      oteResult({
        name: test.name,
        start,
        end: new Date(),
        ...verdict,
        ...(outcome.disruption ? { disruption } : {}),
      }),
    );
  }
}
