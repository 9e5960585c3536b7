// Item: a build farm's runner.env (the runner's own settings and the secrets they reference) reached
// the PR's test binaries, which inherited the runner's whole environment. The runner now starts them
// with what the protocol needs (PATH, locale, KUBECONFIG, EXTENSION_ARTIFACT_DIR, NETSTRESS_ARM …)
// and what the operator names in NETSTRESS_BINARY_ENV, nothing else.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { farmConfigSchema } from "../../src/farm/farm-config.ts";
import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import type { FakeKubeApi } from "@netstress/testbed/sim/start-fake-kube-api.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import {
  farmExecutor,
  REAL_RUNNER_IMAGE,
  RUNNER_IMAGE,
  shardOf,
  startFarmClusters,
} from "../farm/farm-fixture.ts";

const TEST = "[sig-network] reports the environment it was started with";
// An OTE binary whose one test reports its whole environment as its output.
const SPY = `#!/usr/bin/env node
const verb = process.argv[2];
if (verb === "list") {
  console.log(JSON.stringify({ name: ${JSON.stringify(TEST)}, labels: {}, lifecycle: "blocking" }));
} else if (verb === "info") {
  console.log(JSON.stringify({ apiVersion: "v1.1", source: {}, component: { product: "p", type: "t", name: "spy" }, suites: [] }));
} else if (verb === "run-test") {
  const now = new Date().toISOString().replace("T", " ").replace("Z", "000 UTC");
  console.log(JSON.stringify({ name: ${JSON.stringify(TEST)}, lifecycle: "blocking", duration: 1, startTime: now, endTime: now, result: "passed", output: JSON.stringify(process.env) }));
}
`;
const DIGEST = `sha256:${"e".repeat(64)}`;
const SPY_IMAGE = "registry.test/pr/spy";
const TOKEN = "farm-token-from-a-secret";
const PLAN: ExecutionPlan = {
  arch: "amd64",
  arms: [
    {
      arm: "pr",
      components: [
        {
          component: "spy",
          binary: "/bot/binaries/pr/spy-tests-ext.gz",
          source: "override",
          image: SPY_IMAGE,
          digest: DIGEST,
        },
      ],
    },
  ],
};

let dir: Awaited<ReturnType<typeof tempDir>>;
let api: FakeKubeApi;
beforeAll(async () => {
  dir = await tempDir();
  const rootfs = join(dir.path, "spy");
  await mkdir(join(rootfs, "usr/bin"), { recursive: true });
  await writeFile(join(rootfs, "usr/bin/spy-tests-ext.gz"), gzipSync(SPY));
  [api] = (await startFarmClusters({
    names: ["build01"],
    images: {
      [RUNNER_IMAGE]: REAL_RUNNER_IMAGE,
      [`${SPY_IMAGE}@${DIGEST}`]: { rootfs, commands: { cp: ["/bin/cp"] } },
    },
  })) as [FakeKubeApi];
  api.store.create("secrets", {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "runner-creds", namespace: "netstress" },
    data: { token: Buffer.from(TOKEN).toString("base64") },
  });
});
afterAll(async () => {
  await api?.stop();
  await dir.remove();
});

describe("a build farm's runner.env", () => {
  it("reaches the runner but not the PR's test binaries, which get the protocol's variables", async () => {
    const config = farmConfigSchema.parse({
      runner: {
        image: RUNNER_IMAGE,
        env: [
          { name: "FARM_TOKEN", secretKeyRef: { name: "runner-creds", key: "token" } },
          { name: "FARM_SETTING", value: "runner-only-setting" },
        ],
      },
      clusters: [
        {
          name: "build01",
          kubeconfig: api.kubeconfigPath,
          namespace: "netstress",
          arches: ["amd64"],
          capacity: 2,
        },
      ],
    });
    const farm = farmExecutor(config, inject("redisUrl"));
    const runnerEnv: string[] = [];
    const off = api.store.subscribe((event) => {
      if (event.resource !== "jobs" || event.type !== "ADDED") return;
      const spec = event.object.spec as {
        template: { spec: { containers: { env?: { name: string }[] }[] } };
      };
      runnerEnv.push(...(spec.template.spec.containers[0]!.env ?? []).map((e) => e.name));
    });
    try {
      const outcome = await farm.executor.execute({
        shard: shardOf({ count: 1, plan: PLAN }),
        outDir: join(dir.path, "out"),
        signal: new AbortController().signal,
      });
      expect(outcome).toMatchObject({ status: "completed", records: 1 });
      if (outcome.status !== "completed") return;
      const [record] = (await readFile(outcome.resultsPath, "utf8"))
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as ResultRecord);
      expect(record!.result).toBe("passed");
      const seen = JSON.parse(record!.output) as Record<string, string>;
      // The runner had them (the kubelet put them in its container); its binaries do not.
      expect(runnerEnv).toEqual(expect.arrayContaining(["FARM_TOKEN", "FARM_SETTING"]));
      expect(JSON.stringify(seen)).not.toContain(TOKEN);
      expect(JSON.stringify(seen)).not.toContain("runner-only-setting");
      expect(Object.keys(seen).sort()).toEqual(
        expect.arrayContaining(["EXTENSION_ARTIFACT_DIR", "NETSTRESS_ARM", "NETSTRESS_ITERATION", "PATH"]),
      );
      expect(Object.keys(seen).filter((name) => name.startsWith("FARM_"))).toEqual([]);
    } finally {
      off();
      await farm.close();
    }
  }, 60_000);
});
