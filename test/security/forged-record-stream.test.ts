// Item: a PR's test binary runs beside the in-pod runner as the same user, so it could open the
// runner's stdout (/proc/<runner>/fd/1) and write a complete record stream of its own choosing,
// which the collector took for the runner's: forged verdicts, both real binaries passing. The
// runner now signs every stream line with its Job's key, chained, and the collector counts nothing
// of a stream with a line that does not verify. But the key was in the binary's reach too: mounted
// in the runner's container, where the tests ran. Now the tests run in a container of their own
// (the pod's `tests` container, its process spawner), which mounts no key and cannot see the
// runner's processes; the binary below finds neither, and the run reports its real verdict.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { deriveStreamKey } from "../../src/farm/derive-stream-key.ts";
import { createStreamSigner, formatRecordLine, formatStreamTrailer } from "../../src/farm/record-stream.ts";
import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import type { FakeKubeApi } from "@netstress/testbed/sim/start-fake-kube-api.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import {
  FARM_STREAM_SECRET,
  farmConfig,
  farmExecutor,
  REAL_RUNNER_IMAGE,
  RUNNER_IMAGE,
  runnerSigner,
  shardOf,
  simulatedImages,
  simulatedRecords,
  startFarmClusters,
} from "../farm/farm-fixture.ts";

const TEST = "[sig-network] egress keeps its source address";
const forgedRecord: ResultRecord = {
  name: TEST,
  lifecycle: "blocking",
  duration: 1,
  result: "passed",
  output: "forged",
  arm: "pr",
  arch: "amd64",
  iteration: 0,
  attempt: 0,
  component: "forger",
};
const FORGED_LINES = [formatRecordLine(0, forgedRecord), formatStreamTrailer(1, "completed")];
/** Where the Job mounts the runner's stream key (build-iteration-job.ts). */
const KEY_IN_POD = "/var/run/secrets/netstress-stream/key";
// An OTE binary whose one test fails, after trying to forge the runner's stream: it looks for the
// runner among its ancestors (the first started with --stream-records: in a real pod it sees no
// other container's processes), for the stream key where the pod mounts it or where the runner's
// command line names it (the fake kubelet translates mount paths), signs the forged stream with
// the key if it found one (createStreamSigner, through tsx) and writes it into the runner's stdout.
// Its verdict says what it found.
const forger = (tsxApi: string, recordStream: string) => `#!/usr/bin/env node
const fs = require("node:fs");
const verb = process.argv[2];
if (verb === "list") {
  console.log(JSON.stringify({ name: ${JSON.stringify(TEST)}, labels: {}, lifecycle: "blocking" }));
} else if (verb === "info") {
  console.log(JSON.stringify({ apiVersion: "v1.1", source: {}, component: { product: "p", type: "t", name: "forger" }, suites: [] }));
} else if (verb === "run-test") {
  let runner;
  for (let pid = process.ppid; pid > 1 && !runner; ) {
    const args = fs.readFileSync("/proc/" + pid + "/cmdline", "utf8").split("\\0");
    if (args.includes("--stream-records")) runner = { pid, args };
    else pid = Number(fs.readFileSync("/proc/" + pid + "/stat", "utf8").split(") ")[1].split(" ")[1]);
  }
  const places = [${JSON.stringify(KEY_IN_POD)}, ...(runner ? [runner.args[runner.args.indexOf("--stream-key-file") + 1]] : [])];
  let key;
  for (const place of places) {
    try { key = Buffer.from(fs.readFileSync(place, "utf8").trim(), "hex"); break; } catch {}
  }
  if (runner) {
    let lines = ${JSON.stringify(FORGED_LINES)};
    if (key) {
      const { createStreamSigner } = require(${JSON.stringify(tsxApi)}).require(${JSON.stringify(recordStream)}, __filename);
      lines = lines.map(createStreamSigner(key));
    }
    const out = fs.openSync("/proc/" + runner.pid + "/fd/1", "w");
    fs.writeSync(out, lines.join(""));
    fs.closeSync(out);
  }
  const found = "runner: " + (runner ? "found" : "none") + ", key: " + (key ? "found" : "none");
  const now = new Date().toISOString().replace("T", " ").replace("Z", "000 UTC");
  console.log(JSON.stringify({ name: ${JSON.stringify(TEST)}, lifecycle: "blocking", duration: 1, startTime: now, endTime: now, result: "failed", output: "the real verdict; " + found }));
}
`;
const DIGEST = `sha256:${"f".repeat(64)}`;
const FORGER_IMAGE = "registry.test/pr/forger";
const PLAN: ExecutionPlan = {
  arch: "amd64",
  arms: [
    {
      arm: "pr",
      components: [
        {
          component: "forger",
          binary: "/bot/binaries/pr/forger-tests-ext.gz",
          source: "override",
          image: FORGER_IMAGE,
          digest: DIGEST,
        },
      ],
    },
  ],
};

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

describe("a record stream written into the runner's output by something else", () => {
  it("is out of a test binary's reach: it finds neither the runner nor its key, and the run reports its real verdict", async () => {
    const rootfs = join(dir.path, "forger");
    await mkdir(join(rootfs, "usr/bin"), { recursive: true });
    const source = forger(
      createRequire(import.meta.url).resolve("tsx/cjs/api"),
      fileURLToPath(new URL("../../src/farm/record-stream.ts", import.meta.url)),
    );
    await writeFile(join(rootfs, "usr/bin/forger-tests-ext.gz"), gzipSync(source));
    const [api] = (await startFarmClusters({
      names: ["build01"],
      images: {
        [RUNNER_IMAGE]: REAL_RUNNER_IMAGE,
        [`${FORGER_IMAGE}@${DIGEST}`]: { rootfs, commands: { cp: ["/bin/cp"] } },
      },
    })) as [FakeKubeApi];
    const farm = farmExecutor(farmConfig([{ name: "build01", api }]), inject("redisUrl"));
    try {
      const outcome = await farm.executor.execute({
        shard: shardOf({ count: 1, plan: PLAN }),
        outDir: join(dir.path, "forged"),
        signal: new AbortController().signal,
      });
      // Before, the forger read the key beside the runner and wrote a signed stream into its output.
      expect(outcome).toMatchObject({ status: "completed", records: 1 });
      if (outcome.status !== "completed") return;
      const records = (await readFile(outcome.resultsPath, "utf8"))
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as ResultRecord);
      expect(records).toEqual([
        expect.objectContaining({
          name: TEST,
          result: "failed",
          output: expect.stringContaining("the real verdict; runner: none, key: none") as string,
        }),
      ]);
    } finally {
      await farm.close();
      await api.stop();
    }
  }, 60_000);

  it("runs again an iteration whose stream carries no line of its Job's signature, and keeps none of it", async () => {
    // Iteration 0 is the runner's own; 1 is unsigned, 2 was signed for another Job (a replay).
    const otherJob = createStreamSigner(
      deriveStreamKey(FARM_STREAM_SECRET, {
        cluster: "build02",
        namespace: "netstress",
        job: "nst-0-both-amd64-i9-a0",
      }),
    );
    const images = simulatedImages({
      simulate: async ({ args }) => {
        const iteration = Number(args[args.indexOf("--first-iteration") + 1]);
        const lines = [
          ...simulatedRecords(iteration).map((r, i) => formatRecordLine(i, r)),
          formatStreamTrailer(4, "completed"),
        ];
        const sign = [
          await runnerSigner(args),
          (l: readonly string[]) => l.join(""),
          (l: readonly string[]) => l.map(otherJob).join(""),
        ][iteration]!;
        return { stdout: sign(lines), exitCode: 0 };
      },
    });
    const [api] = (await startFarmClusters({ names: ["build02"], images })) as [FakeKubeApi];
    const farm = farmExecutor(
      farmConfig([{ name: "build02", api }], { infraRetries: 1 }),
      inject("redisUrl"),
    );
    try {
      const outcome = await farm.executor.execute({
        shard: shardOf({ count: 3 }),
        outDir: join(dir.path, "unsigned"),
        signal: new AbortController().signal,
      });
      expect(outcome).toMatchObject({ status: "completed", records: 4 });
      if (outcome.status !== "completed") return;
      const unverified = expect.stringMatching(
        /after 2 attempts: .*its record stream was tampered with: none of its 5 stream lines carries its Job's signature/,
      ) as string;
      expect(outcome.lost).toEqual([
        { iteration: 1, reason: unverified },
        { iteration: 2, reason: unverified },
      ]);
    } finally {
      await farm.close();
      await api.stop();
    }
  });
});
