import { afterEach, describe, expect, it } from "vitest";
import {
  startSimulatedCluster,
  type SimulatedCluster,
} from "@netstress/testbed/sim/start-simulated-cluster.ts";
import { startExtRun } from "./run-ext.ts";

const UPGRADE_TEST =
  "[sig-network][Disruptive][Upgrade][Serial] every network path should stay reachable while the cluster upgrades";
const FROM = `quay.io/openshift-release-dev/ocp-release@sha256:${"0".repeat(64)}`;
const TARGET = `quay.io/openshift-release-dev/ocp-release@sha256:${"1".repeat(64)}`;

let cluster: SimulatedCluster | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

describe("netstress-network-tests' [Upgrade] test", () => {
  it("never upgrades a cluster twice: one whose ClusterVersion history has the target already is skipped, saying why", async () => {
    cluster = await startSimulatedCluster({ arch: "amd64", payload: FROM, upgradeMs: 50 });
    // An earlier attempt of the run (its pod lost, its cluster handed to a rerun) upgraded it.
    cluster.api.store.update("clusterversions", "", "version", (o) => {
      o.spec = { ...o.spec, desiredUpdate: { image: TARGET, version: "", force: true } };
    });
    for (let waited = 0; cluster.payload() !== TARGET; waited += 50) {
      expect(waited).toBeLessThan(10_000);
      await new Promise((r) => setTimeout(r, 50));
    }
    const updates: unknown[] = [];
    cluster.api.store.subscribe((event) => {
      if (event.resource === "clusterversions") updates.push(event.object.spec?.desiredUpdate);
    });
    const { done } = startExtRun({
      names: [UPGRADE_TEST],
      env: { ...process.env, KUBECONFIG: cluster.kubeconfigPath, NETSTRESS_UPGRADE_TARGET: TARGET },
    });
    const { results } = await done;
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ name: UPGRADE_TEST, result: "skipped" });
    expect(results[0]!.output).toContain(
      `the cluster was upgraded to ${TARGET} already (its ClusterVersion history has it, Completed)`,
    );
    expect(updates).toEqual([]);
  }, 60_000);
});
