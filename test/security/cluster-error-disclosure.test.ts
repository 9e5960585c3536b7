// Item: cluster errors disclosed the Hive hub's namespace, the bot's object names and Secret names
// on public repositories' check runs. A public repository's check run now says the short reason;
// the detail goes to the bot's logs, and a private repository's check run keeps it.
import { writeFile } from "node:fs/promises";
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processExecute } from "../../src/queue/process-execute.ts";
import type { AnalyzeRunResults } from "../../src/runs/analyze-port.ts";
import type { PrRun } from "../../src/runs/run-record.ts";
import type { ShardExecutor } from "../../src/runs/shard-executor.ts";
import { startFakeHive, type FakeHive } from "@netstress/testbed/sim/start-fake-hive.ts";
import { startFakeKubeApi } from "@netstress/testbed/sim/start-fake-kube-api.ts";
import { createClusterProvider } from "../../src/clusters/create-cluster-provider.ts";
import { createMemoryClusterLeases } from "../../src/clusters/memory-cluster-leases.ts";
import { clusterSourcesSchema } from "../../src/clusters/cluster-sources-config.ts";
import { ClustersUnavailableError } from "../../src/runs/clusters-unavailable-error.ts";
import { hiveProvider, NAMESPACE, PR, RELEASED, seedHub } from "../clusters/hive-fixture.ts";
import { runRecord, testRunDeps } from "../helpers/github-run-deps.ts";
import { commentPayload } from "../helpers/github-payloads.ts";
import { controlledExecutor, startTestBot } from "../helpers/github-test-bot.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let hive: FakeHive;

beforeAll(async () => {
  hive = await startFakeHive({ installMs: 200 });
  seedHub(hive);
  // Every install's release image fails verification: Hive's InstallImagesNotResolved.
  hive.setFaults({ unresolvedImages: () => true });
});
afterAll(() => hive.stop());

const executor: ShardExecutor = {
  name: "local",
  arches: async () => ["arm64"],
  execute: () => Promise.reject(new Error("no cluster was handed out: nothing runs")),
};
const analyze: AnalyzeRunResults = () => Promise.reject(new Error("nothing to analyze"));

/** A PR run of the PR payload on arm64 (no pool serves it: the source installs a deployment). */
async function runWithoutClusters(privateRepository: boolean) {
  // The run machinery with GitHub faked, for this run alone (a test bot fakes GitHub its own way).
  const env = await testRunDeps();
  const dir = await tempDir();
  const record = runRecord({
    arch: "arm64",
    subject: privateRepository ? { privateRepository: true } : {},
    plan: {
      arch: "arm64",
      arms: [{ arm: "pr", components: [{ component: "probe", binary: "/nonexistent/probe-tests-ext" }] }],
    },
    payloads: { pr: PR },
    options: { iterations: 2, baseline: "none" },
    source: { ...runRecord().source, payload: RELEASED, clusters: 1 },
  });
  const lines: string[] = [];
  const log = pino(
    { level: "warn" },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  );
  const clusters = hiveProvider({
    hubKubeconfig: hive.hub.kubeconfigPath,
    redis: env.redis,
    prefix: env.prefix,
    readySeconds: 20,
  });
  try {
    await env.deps.store.create(record);
    await processExecute(
      { ...env.deps, log },
      { executor, clusters: () => clusters, analyze, dataDir: dir.path, progressIntervalMs: 10 },
      record.id,
    );
    const run = (await env.deps.store.get(record.id)) as PrRun;
    const written = env.github
      .checkRunWrites()
      .map((w) => JSON.stringify(w.body))
      .join("\n");
    return { run, written, logs: lines.join("") };
  } finally {
    clusters.stop();
    await env.close();
    await dir.remove();
  }
}

/** What a public check run must not name: the hub's namespace, the bot's objects, their Secrets. */
const INFRASTRUCTURE = [NAMESPACE, "nst-", "-install-config", "deployment "];

describe("cluster errors on check runs", () => {
  it("say only the short reason on a public repository's check run, the detail in the logs", async () => {
    const { run, written, logs } = await runWithoutClusters(false);
    expect(run.conclusion).toBe("failure");
    expect(run.reason).toContain(
      "no cluster of source hive became ready: install failed (InstallImagesNotResolved)",
    );
    expect(written).toContain("no cluster of source hive became ready");
    for (const name of INFRASTRUCTURE) {
      expect(run.reason).not.toContain(name);
      expect(written).not.toContain(name);
    }
    // The operator still finds out which deployment failed, and why, in the logs.
    expect(logs).toContain("no clusters under test for the run");
    expect(logs).toMatch(/deployment nst-[a-z0-9-]+ cannot install: InstallImagesNotResolved/);
  });

  it("keep the detail on a private repository's check run", async () => {
    const { run } = await runWithoutClusters(true);
    expect(run.reason).toMatch(/deployment nst-[a-z0-9-]+ cannot install: InstallImagesNotResolved/);
  });

  it("know a repository is private from its webhook's repository.private", async () => {
    const t = await startTestBot({
      github: { members: ["alice"], config: "arches: [amd64]\n" },
      executor: controlledExecutor().executor,
    });
    try {
      const command = commentPayload({ body: "/test network-stress iterations=2" });
      await t.deliver(
        "issue_comment",
        { ...command, repository: { ...command.repository, private: true } },
        "private-repo",
      );
      await t.intakeHandled(1);
      const runs = await t.store.listForPullRequest("openshift", "ovn-kubernetes", 7);
      expect(runs.map((r) => r.subject.privateRepository)).toEqual([true]);
    } finally {
      await t.stop();
    }
  });

  it("name no Secret of a static source in the short reason", async () => {
    const secrets = await startFakeKubeApi({ tls: true });
    const scratch = await tempDir();
    const secretsFrom = `${scratch.path}/secrets-kubeconfig`;
    await writeFile(secretsFrom, secrets.kubeconfig);
    const provider = createClusterProvider({
      sources: () =>
        clusterSourcesSchema.parse([
          {
            type: "static",
            name: "lab",
            secretsFrom,
            clusters: [
              {
                name: "c0",
                arch: "amd64",
                kubeconfigSecret: { namespace: "lab-admin", name: "c0-admin-kubeconfig" },
              },
            ],
          },
        ]),
      leases: createMemoryClusterLeases({ leaseMs: 30_000 }),
      prefix: "disclosure",
      logger: pino({ level: "silent" }),
      timeoutMs: 5000,
    });
    try {
      const error = await provider
        .acquire({
          runId: "run",
          arch: "amd64",
          arms: [{ arm: "baseline", payload: RELEASED }],
          count: 1,
          signal: new AbortController().signal,
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ClustersUnavailableError);
      const { message, reason } = error as ClustersUnavailableError;
      expect(message).toContain("the kubeconfig Secret lab-admin/c0-admin-kubeconfig");
      expect(reason).toBe(
        "0 of 1 amd64 clusters for the baseline arm: lab: 1 cluster that could not be read",
      );
    } finally {
      provider.stop();
      await secrets.stop();
      await scratch.remove();
    }
  });
});
