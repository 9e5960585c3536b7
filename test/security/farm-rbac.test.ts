// Item: the farm's RBAC granted ConfigMap and pod delete verbs nothing uses. The Role now grants
// exactly what the farm client calls: this test runs shards (with and without clusters under test)
// and the start-up reconciliation against a fake API server, maps every call to its RBAC verb, and
// compares with the Role.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { reconcileFarmJobs } from "../../src/farm/reconcile-farm-jobs.ts";
import { renderKustomization, deployDir } from "../deploy/render-kustomization.ts";
import { startFakeKubeApi, type FakeKubeApi } from "@netstress/testbed/sim/start-fake-kube-api.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { testClusterProvider } from "../helpers/test-cluster-provider.ts";
import {
  farmConfig,
  farmExecutor,
  RELEASE_IMAGE,
  shardOf,
  startFarmClusters,
  writeFarmImages,
} from "../farm/farm-fixture.ts";

let dir: { path: string; remove: () => Promise<void> };
let api: FakeKubeApi;
let cut: FakeKubeApi;
let kubeconfig: string;

beforeAll(async () => {
  dir = await tempDir();
  [api] = (await startFarmClusters({
    names: ["solo"],
    images: await writeFarmImages(join(dir.path, "images")),
  })) as [FakeKubeApi];
  // The clusters under test are elsewhere: the runner's calls to them are not the farm client's.
  cut = await startFakeKubeApi();
  kubeconfig = await readFile(cut.kubeconfigPath, "utf8");
});
afterAll(async () => {
  await Promise.all([api.stop(), cut.stop()]);
  await dir.remove();
});

/** The RBAC verbs an HTTP call may need: a GET of a resource is a get, a list or a watch. */
const verbsOf = (method: string, resource: string): string[] =>
  ({
    POST: ["create"],
    PUT: ["update"],
    GET: resource.includes("/") ? ["get"] : ["get", "list", "watch"],
    DELETE: ["delete"],
  })[method] ?? [`unknown:${method}`];

describe("the farm client's Role", () => {
  it("grants what the farm calls and nothing else", async () => {
    const farm = farmExecutor(farmConfig([{ name: "solo", api }]), inject("redisUrl"));
    try {
      const outcome = await farm.executor.execute({
        shard: shardOf({ count: 2 }),
        outDir: join(dir.path, "run"),
        signal: new AbortController().signal,
      });
      expect(outcome.status).toBe("completed");
      // With clusters under test, each Job gets a Secret with their kubeconfigs.
      const clusters = testClusterProvider({ kubeconfig: () => kubeconfig });
      const signal = new AbortController().signal;
      const leases = async (arm: "pr" | "baseline") =>
        (
          await clusters.acquire({
            runId: "r",
            arch: "amd64",
            arms: [{ arm, payload: RELEASE_IMAGE }],
            count: 1,
            signal,
          })
        )[arm]!;
      const withClusters = await farm.executor.execute({
        shard: shardOf({ count: 1 }),
        outDir: join(dir.path, "run-clusters"),
        signal,
        clusters: { pr: await leases("pr"), baseline: await leases("baseline") },
      });
      expect(withClusters.status).toBe("completed");
      await reconcileFarmJobs({
        executor: farm.executor,
        isRunActive: async () => false,
        logger: pino({ level: "silent" }),
      });
    } finally {
      await farm.close();
    }
    const used = new Map<string, Set<string>>();
    for (const call of api.stats.calls.keys()) {
      const [method, resource] = call.split(" ") as [string, string];
      const verbs = used.get(resource) ?? new Set<string>();
      for (const verb of verbsOf(method, resource)) verbs.add(verb);
      used.set(resource, verbs);
    }

    const role = renderKustomization(join(deployDir, "farm")).find(
      (m) => m.kind === "Role" && m.metadata.name === "netstress-farm-client",
    ) as unknown as { rules: { resources: string[]; verbs: string[] }[] };
    const granted = new Map<string, Set<string>>();
    for (const rule of role.rules)
      for (const resource of rule.resources) granted.set(resource, new Set(rule.verbs));

    expect([...granted.keys()].sort()).toEqual([...used.keys()].sort());
    for (const [resource, verbs] of used) {
      for (const verb of verbs) expect(granted.get(resource), `${verb} ${resource}`).toContain(verb);
    }
    expect(granted.get("pods")).not.toContain("delete");
    expect([...(granted.get("pods/log") ?? [])]).toEqual(["get"]);
  });
});
