import { afterEach, describe, expect, it } from "vitest";
import { moveClusterTo } from "../../src/clusters/move-cluster-to.ts";
import { createKubeObjects, type KubeObjects } from "@netstress/core/kube/kube-objects.ts";
import { ClustersUnavailableError } from "../../src/runs/clusters-unavailable-error.ts";
import {
  startSimulatedCluster,
  type SimulatedCluster,
} from "@netstress/testbed/sim/start-simulated-cluster.ts";

const RELEASED = `quay.io/openshift-release-dev/ocp-release@sha256:${"a".repeat(64)}`;
const PR = `registry.example/netstress/pr-payload@sha256:${"b".repeat(64)}`;

let cluster: SimulatedCluster | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

/** The cluster's API, counting the update requests (merge patches) it is sent. */
function counted(simulated: SimulatedCluster): { objects: KubeObjects; patches: () => number } {
  const objects = createKubeObjects({
    name: simulated.name,
    kubeconfig: { path: simulated.kubeconfigPath },
    timeoutMs: 5000,
  });
  let patches = 0;
  return {
    objects: {
      ...objects,
      name: objects.name,
      mergePatch: (...args) => {
        patches++;
        return objects.mergePatch(...args);
      },
    },
    patches: () => patches,
  };
}

describe("moving a cluster to another payload", () => {
  it("asks the cluster-version operator once: a second mover (a resumed run) while it moves, or after, waits without asking again", async () => {
    cluster = await startSimulatedCluster({ arch: "amd64", payload: RELEASED, upgradeMs: 300 });
    const { objects, patches } = counted(cluster);
    const move = () => moveClusterTo({ objects, payload: PR, timeoutMs: 10_000, pollMs: 20 });
    const first = move();
    // The second starts once the first's request is in: the cluster says it moves there.
    await expect.poll(() => patches()).toBe(1);
    await Promise.all([first, move()]);
    expect(cluster.payload()).toBe(PR);
    await move();
    expect(patches()).toBe(1);
    const history = cluster.api.store.get("clusterversions", "", "version")!.status as {
      history: { state: string; image: string }[];
    };
    expect(history.history.map((h) => [h.state, h.image])).toEqual([
      ["Completed", PR],
      ["Completed", RELEASED],
    ]);
  });

  it("gives up with a reason once the upgrade has not completed in its time", async () => {
    cluster = await startSimulatedCluster({ arch: "amd64", payload: RELEASED, upgradeMs: 60_000 });
    const { objects } = counted(cluster);
    const moving = moveClusterTo({ objects, payload: PR, timeoutMs: 1000, pollMs: 20 });
    await expect(moving).rejects.toThrow(ClustersUnavailableError);
    await expect(moving).rejects.toMatchObject({ reason: "the upgrade did not complete in 1 s" });
  });
});
