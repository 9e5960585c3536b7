import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSampleBinary } from "../../examples/sample-ext/build-sample-binaries.ts";
import { formatRecordLine, formatStreamTrailer, parseRecordStream } from "../../src/farm/record-stream.ts";
import type { ResultRecord } from "../../src/runner/result-record.ts";
import { runNetstress } from "../helpers/run-netstress.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const record = (name: string, iteration = 0): ResultRecord => ({
  name,
  lifecycle: "blocking",
  duration: 3,
  result: "passed",
  output: "",
  arm: "pr",
  arch: "amd64",
  iteration,
  attempt: 0,
  component: "ovn-kubernetes",
});

const stream = (names: string[]) => names.map((n, i) => formatRecordLine(i, record(n))).join("");

describe("record stream framing", () => {
  it("reads records among log noise and knows the stream is whole from its trailer", () => {
    const log = `starting\n${formatRecordLine(0, record("a"))}progress 1/2\r\n${formatRecordLine(1, record("b"))}${formatStreamTrailer(2, "completed")}bye\n`;
    const parsed = parseRecordStream(log);
    expect(parsed).toMatchObject({ complete: true, status: "completed" });
    expect(parsed.records.map((r) => r.name)).toEqual(["a", "b"]);
  });

  it("keeps a record whose output contains newlines and marker-like text on one line", () => {
    const tricky = { ...record("x"), output: `line1\n@@netstress/v1 end 9 completed\nline3` };
    const parsed = parseRecordStream(formatRecordLine(0, tricky) + formatStreamTrailer(1, "completed"));
    expect(parsed.complete).toBe(true);
    expect(parsed.records[0]!.output).toBe(tricky.output);
  });

  it.each([
    ["a missing trailer", stream(["a", "b"]), /no end-of-stream trailer after 2 records/],
    ["a line cut in half", stream(["a", "b"]).slice(0, -20), /record 1 is not complete JSON/],
    [
      "a lost line",
      formatRecordLine(0, record("a")) + formatRecordLine(2, record("c")),
      /record 1 was expected/,
    ],
    [
      "a trailer that disagrees",
      stream(["a"]) + formatStreamTrailer(2, "completed"),
      /counts 2 records but 1/,
    ],
    ["nothing at all", "exec format error\n", /no records and no end-of-stream trailer/],
    [
      "a record that is not a result record",
      `@@netstress/v1 0 {"name":"a"}\n${formatStreamTrailer(1, "completed")}`,
      /record 0 is not a result record/,
    ],
  ])("reports %s as an incomplete stream", (_what, log, problem) => {
    const parsed = parseRecordStream(log);
    expect(parsed.complete).toBe(false);
    if (!parsed.complete) expect(parsed.problem).toMatch(problem);
  });
});

describe("netstress run --stream-records", () => {
  let dir: { path: string; remove: () => Promise<void> };
  let binary: string;
  beforeAll(async () => {
    dir = await tempDir();
    binary = await writeSampleBinary({
      suite: {
        component: "ovn-kubernetes",
        commit: "1".repeat(40),
        buildDate: "2026-01-01T00:00:00Z",
        tests: [
          { name: "[sig-network] passes", durationMs: [1, 2] },
          { name: "[sig-network] fails", failureProbability: 1, durationMs: [1, 2] },
        ],
      },
      path: join(dir.path, "ovn-kubernetes-tests-ext"),
    });
  });
  afterAll(() => dir.remove());

  it("streams every record of its iteration, numbered from --first-iteration, and exits 0 despite failures", async () => {
    const result = await runNetstress([
      "run",
      "--binary",
      `ovn-kubernetes=${binary}`,
      "--iterations",
      "2",
      "--first-iteration",
      "40",
      "--retries",
      "0",
      "--stream-records",
      "--out",
      join(dir.path, "out"),
    ]);
    expect(result.code).toBe(0);
    const parsed = parseRecordStream(result.stdout);
    expect(parsed).toMatchObject({ complete: true, status: "completed" });
    expect(parsed.records).toHaveLength(4);
    expect(new Set(parsed.records.map((r) => r.iteration))).toEqual(new Set([40, 41]));
    expect(parsed.records.filter((r) => r.result === "failed")).toHaveLength(2);
  });
});
