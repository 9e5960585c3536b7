import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { writeSampleBinary } from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import { DETAILED_TEST } from "@netstress/testbed/sample-ext/suites.ts";
import { createHttpRoutes } from "../../src/app/http-routes.ts";
import { runDir } from "../../src/queue/run-dir.ts";
import { runArtifactHref } from "../../src/queue/run-artifacts.ts";
import { analyzeRun } from "../../src/report/analyze-run.ts";
import { iterationArtifactsSchema } from "../../src/runner/iteration-artifacts.ts";
import type { RunRecord } from "../../src/runs/run-record.ts";
import type { FakeImage, FakeKubeApi } from "@netstress/testbed/sim/start-fake-kube-api.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import {
  farmConfig,
  farmExecutor,
  PR_DIGEST,
  RELEASE_IMAGE,
  REAL_RUNNER_IMAGE,
  RUNNER_IMAGE,
  shardOf,
  simulatedImages,
  simulatedRecords,
  startFarmClusters,
  runnerSigner,
} from "./farm-fixture.ts";
import { formatFileLines, formatRecordLine, formatStreamTrailer } from "../../src/farm/record-stream.ts";
import { readdir } from "node:fs/promises";

let dir: { path: string; remove: () => Promise<void> };
let api: FakeKubeApi;

/** Both arms' ovn-kubernetes binaries run one test that writes an artifact on every execution. */
async function artifactImages(root: string): Promise<Record<string, FakeImage>> {
  const build = async (name: string): Promise<FakeImage> => {
    const rootfs = join(root, name);
    await mkdir(join(rootfs, "usr/bin"), { recursive: true });
    await writeSampleBinary({
      suite: {
        component: "ovn-kubernetes",
        commit: "c".repeat(40),
        buildDate: "2026-01-01T00:00:00Z",
        tests: [{ name: DETAILED_TEST, durationMs: [1, 3], artifact: "ovn-flows" }],
      },
      path: join(rootfs, "usr/bin/ovn-kubernetes-tests-ext.gz"),
      gzip: true,
    });
    return { rootfs, commands: { cp: ["/bin/cp"] } };
  };
  return {
    [RUNNER_IMAGE]: REAL_RUNNER_IMAGE,
    [`registry.test/pr/ovn-kubernetes@${PR_DIGEST}`]: await build("pr"),
    [RELEASE_IMAGE]: await build("released"),
  };
}

beforeAll(async () => {
  dir = await tempDir();
  [api] = (await startFarmClusters({
    names: ["east"],
    images: await artifactImages(join(dir.path, "images")),
  })) as [FakeKubeApi];
});
afterAll(async () => {
  await api?.stop();
  await dir.remove();
});

/** GET with the path exactly as given (a client's URL parser would fold "." and ".." names away). */
async function get(server: Server, path: string) {
  const { port } = server.address() as AddressInfo;
  const req = request({ host: "127.0.0.1", port, path, method: "GET" });
  req.end();
  const [res] = (await once(req, "response")) as [IncomingMessage];
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() };
}

describe("artifacts of build-farm pods", () => {
  it("reach the run's report through the pod log and are served by the bot as downloads, nothing outside them", async () => {
    const dataDir = join(dir.path, "data");
    const shard = shardOf({ count: 2 });
    const { runId } = shard;
    const shardDir = join(runDir(dataDir, runId), "shards", shard.id);
    const farm = farmExecutor(farmConfig([{ name: "east", api }]), inject("redisUrl"));
    let resultsPath: string;
    try {
      const outcome = await farm.executor.execute({
        shard,
        outDir: shardDir,
        signal: new AbortController().signal,
      });
      expect(outcome).toMatchObject({ status: "completed", records: 4 });
      if (outcome.status !== "completed") return;
      resultsPath = outcome.resultsPath;
    } finally {
      await farm.close();
    }

    // Each iteration's files are kept under its own directory, with an index of them.
    for (const iteration of [0, 1]) {
      const index = iterationArtifactsSchema.parse(
        JSON.parse(await readFile(join(shardDir, `artifacts/iteration-${iteration}.json`), "utf8")),
      );
      expect(index).toEqual({
        iteration,
        files: ["pr", "baseline"]
          .map((arm) => ({
            arm,
            component: "ovn-kubernetes",
            path: `ovn-flows-${arm}-${iteration}-0.txt`,
            bytes: DETAILED_TEST.length + 1,
          }))
          .sort((a, b) => (a.arm < b.arm ? 1 : -1)),
        omitted: [],
      });
      for (const arm of ["pr", "baseline"])
        expect(
          await readFile(
            join(
              shardDir,
              `artifacts/iteration-${iteration}/${arm}/ovn-kubernetes/ovn-flows-${arm}-${iteration}-0.txt`,
            ),
            "utf8",
          ),
        ).toBe(`${DETAILED_TEST}\n`);
    }

    // The report lists them per iteration, arm and component, linked where the bot serves them.
    const result = await analyzeRun({
      pr: [resultsPath],
      outDir: join(runDir(dataDir, runId), "report"),
      artifactHref: runArtifactHref({ runDir: runDir(dataDir, runId), runId }),
    });
    const html = await readFile(result.paths.html, "utf8");
    expect(html).toContain("Artifacts from the build farm");
    const links = [...html.matchAll(/href="(\/runs\/[^"]+)"/g)].map((m) => m[1]!);
    expect(links.sort()).toEqual(
      [0, 1]
        .flatMap((i) =>
          ["pr", "baseline"].map(
            (arm) =>
              `/runs/${runId}/artifacts/${shard.id}/iteration-${i}/${arm}/ovn-kubernetes/ovn-flows-${arm}-${i}-0.txt`,
          ),
        )
        .sort(),
    );

    const routes = createHttpRoutes({
      store: { get: async (id) => (id === runId ? ({ id } as RunRecord) : undefined) },
      ready: async () => true,
      publicUrl: "http://127.0.0.1",
      dataDir,
    });
    const server = createServer((req, res) => {
      void Promise.resolve(routes(req, res)).then((handled) => {
        if (!handled) res.writeHead(404).end("unrouted\n");
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const served = await get(server, links[0]!);
      expect(served).toMatchObject({ status: 200, body: `${DETAILED_TEST}\n` });
      expect(served.headers).toMatchObject({
        "content-type": "text/plain; charset=utf-8",
        "content-disposition": expect.stringMatching(/^attachment; filename="ovn-flows-/),
        "x-content-type-options": "nosniff",
        "content-security-policy": expect.stringMatching(/^sandbox; default-src 'none'/),
      });
      const base = `/runs/${runId}/artifacts/${shard.id}`;
      for (const path of [
        `${base}/../iterations/0.jsonl`,
        `${base}/iteration-0/../../results.jsonl`,
        `${base}/%2e%2e/results.jsonl`,
        `${base}/..%2fresults.jsonl`,
        `${base}/iteration-0/pr/ovn-kubernetes/nothing-here.txt`,
        `/runs/${runId}/artifacts/../shards/${shard.id}/results.jsonl`,
        `/runs/${"0".repeat(32)}/artifacts/${shard.id}/iteration-0/pr/ovn-kubernetes/ovn-flows-pr-0-0.txt`,
      ]) {
        const refused = await get(server, path);
        expect({ path, status: refused.status }).toEqual({ path, status: 404 });
        expect(refused.body).not.toContain('"name"');
      }
    } finally {
      server.close();
    }
  });

  it("keeps a hostile pod's files inside its iteration's directory: escaping paths are refused with the reason", async () => {
    const hostile = (path: string, sequence: number) =>
      formatFileLines({
        firstSequence: sequence,
        arm: "pr",
        component: "ovn-kubernetes",
        path,
        content: Buffer.from("pwned\n"),
      });
    const runner: FakeImage = {
      async simulate({ args }) {
        const iteration = Number(args[args.indexOf("--first-iteration") + 1]);
        const records = simulatedRecords(iteration);
        const files = [
          ...hostile("../../../../results.jsonl", 0),
          ...hostile("/etc/cron.d/job", 1),
          ...hostile("ok.txt", 2),
        ];
        // Signed as the runner signs: the collector's path checks hold whoever wrote the stream.
        const signed = await runnerSigner(args);
        return {
          stdout: signed([
            ...records.map((r, i) => formatRecordLine(i, r)),
            ...files,
            formatStreamTrailer(records.length, "completed"),
          ]),
          exitCode: 0,
        };
      },
    };
    const [evil] = (await startFarmClusters({ names: ["evil"], images: simulatedImages(runner) })) as [
      FakeKubeApi,
    ];
    const farm = farmExecutor(farmConfig([{ name: "evil", api: evil }]), inject("redisUrl"));
    const shardDir = join(dir.path, "hostile", "shards", "amd64-0-0");
    try {
      const outcome = await farm.executor.execute({
        shard: shardOf({ count: 1 }),
        outDir: shardDir,
        signal: new AbortController().signal,
      });
      expect(outcome).toMatchObject({ status: "completed", records: 4 });
    } finally {
      await farm.close();
      await evil.stop();
    }
    const index = iterationArtifactsSchema.parse(
      JSON.parse(await readFile(join(shardDir, "artifacts/iteration-0.json"), "utf8")),
    );
    expect(index.files.map((f) => f.path)).toEqual(["ok.txt"]);
    expect(index.omitted.map((o) => o.reason)).toEqual([
      expect.stringMatching(/refused path .*"\.\." name/),
      expect.stringMatching(/refused path .*absolute/),
    ]);
    // The results the pod tried to overwrite are the collector's own.
    expect(await readFile(join(shardDir, "results.jsonl"), "utf8")).not.toContain("pwned");
    expect(await readdir(join(shardDir, "artifacts/iteration-0/pr/ovn-kubernetes"))).toEqual(["ok.txt"]);
  });
});
