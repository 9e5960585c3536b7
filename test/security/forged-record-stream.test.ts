// Item: a PR's test binary runs beside the in-pod runner as the same user, so it could open the
// runner's stdout (/proc/<runner>/fd/1) and write a complete record stream of its own choosing,
// which the collector took for the runner's: forged verdicts, both real binaries passing. The
// runner now signs every stream line with its Job's key, chained, and the collector counts nothing
// of a stream with a line that does not verify.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { deriveStreamKey } from "../../src/farm/derive-stream-key.ts";
import { createStreamSigner, formatRecordLine, formatStreamTrailer } from "../../src/farm/record-stream.ts";
import type { ExecutionPlan } from "../../src/runner/execution-plan.ts";
import type { ResultRecord } from "../../src/runner/result-record.ts";
import type { FakeKubeApi } from "../../src/sim/start-fake-kube-api.ts";
import { NETSTRESS_BIN } from "../helpers/run-netstress.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import {
  FARM_STREAM_SECRET,
  farmConfig,
  farmExecutor,
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
const FORGED_STREAM = formatRecordLine(0, forgedRecord) + formatStreamTrailer(1, "completed");
// An OTE binary whose one test fails, and which first writes a passing stream into the output of
// the runner that started it (the first ancestor started with --stream-records).
const FORGER = `#!/usr/bin/env node
const fs = require("node:fs");
const verb = process.argv[2];
if (verb === "list") {
  console.log(JSON.stringify({ name: ${JSON.stringify(TEST)}, labels: {}, lifecycle: "blocking" }));
} else if (verb === "info") {
  console.log(JSON.stringify({ apiVersion: "v1.1", source: {}, component: { product: "p", type: "t", name: "forger" }, suites: [] }));
} else if (verb === "run-test") {
  let pid = process.ppid;
  while (pid > 1 && !fs.readFileSync("/proc/" + pid + "/cmdline", "utf8").includes("--stream-records"))
    pid = Number(fs.readFileSync("/proc/" + pid + "/stat", "utf8").split(") ")[1].split(" ")[1]);
  const out = fs.openSync("/proc/" + pid + "/fd/1", "w");
  fs.writeSync(out, ${JSON.stringify(FORGED_STREAM)});
  fs.closeSync(out);
  const now = new Date().toISOString().replace("T", " ").replace("Z", "000 UTC");
  console.log(JSON.stringify({ name: ${JSON.stringify(TEST)}, lifecycle: "blocking", duration: 1, startTime: now, endTime: now, result: "failed", output: "the real verdict" }));
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
  it("yields no verdicts of the forger's: the iteration says its stream was tampered with", async () => {
    const rootfs = join(dir.path, "forger");
    await mkdir(join(rootfs, "usr/bin"), { recursive: true });
    await writeFile(join(rootfs, "usr/bin/forger-tests-ext.gz"), gzipSync(FORGER));
    const [api] = (await startFarmClusters({
      names: ["build01"],
      images: {
        [RUNNER_IMAGE]: { commands: { netstress: [process.execPath, NETSTRESS_BIN] } },
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
      if (outcome.status === "completed") {
        const records = (await readFile(outcome.resultsPath, "utf8")).split("\n").filter(Boolean);
        // What the forger achieved, if anything: its verdict in place of the real one.
        expect(records.map((line) => (JSON.parse(line) as ResultRecord).output)).not.toContain("forged");
      }
      expect(outcome).toMatchObject({
        status: "failed",
        reason: expect.stringMatching(
          /its record stream was tampered with: stream line 1 does not carry its runner's signature/,
        ) as string,
      });
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
