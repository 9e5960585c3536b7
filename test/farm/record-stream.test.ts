import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSampleBinary } from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import { deriveStreamKey } from "../../src/farm/derive-stream-key.ts";
import {
  createStreamSigner,
  FILE_CHUNK_BYTES,
  formatFileLines,
  formatOmittedLine,
  formatRecordLine,
  formatStreamTrailer,
  parseRecordStream,
} from "../../src/farm/record-stream.ts";
import { createArtifactSaver } from "../../src/farm/save-iteration-artifacts.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
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

describe("a signed record stream", () => {
  const key = deriveStreamKey("bot secret", {
    cluster: "build01",
    namespace: "netstress",
    job: "nst-a-pr-amd64-i0-a0",
  });
  const lines = [
    formatRecordLine(0, record("a")),
    ...file("flows.txt", Buffer.from("flows\n")),
    formatOmittedLine({ reason: "over the budget" }),
    formatRecordLine(1, record("b")),
    formatStreamTrailer(2, "completed"),
  ];
  const signed = (key: Buffer, text: readonly string[] = lines) => text.map(createStreamSigner(key));
  const log = (parts: readonly string[]) => `netstress run: seed 1\n${parts.join("")}2 executions recorded\n`;

  it("is read whole with its key among other output, files and all", () => {
    const parsed = parseRecordStream(log(signed(key)), { key });
    expect(parsed).toMatchObject({ complete: true, status: "completed" });
    expect(parsed.records.map((r) => r.name)).toEqual(["a", "b"]);
    expect(parsed.files.map((f) => f.path)).toEqual(["flows.txt"]);
  });

  const otherJob = deriveStreamKey("bot secret", {
    cluster: "build01",
    namespace: "netstress",
    job: "nst-a-pr-amd64-i0-a1",
  });
  const forgedRecord = formatRecordLine(1, { ...record("b"), result: "failed" });
  it.each([
    ["an injected unsigned line", (s: string[]) => [...s.slice(0, 3), forgedRecord, ...s.slice(3)]],
    [
      "an injected line signed with the key but out of the chain",
      (s: string[]) => [s[0]!, createStreamSigner(key)(forgedRecord), ...s.slice(1)],
    ],
    ["a line of another Job's stream", (s: string[]) => [s[0]!, signed(otherJob)[1]!, ...s.slice(1)]],
    ["an altered line", (s: string[]) => s.map((line) => line.replace('"name":"b"', '"name":"c"'))],
    ["a dropped line", (s: string[]) => [s[0]!, ...s.slice(2)]],
    ["two lines swapped", (s: string[]) => [s[1]!, s[0]!, ...s.slice(2)]],
    ["a line added after the trailer", (s: string[]) => [...s, forgedRecord]],
    ["a second stream before the runner's", (s: string[]) => [...signed(key, [forgedRecord]), ...s]],
  ])("counts nothing of a stream with %s, and says it was tampered with", (_what, change) => {
    const parsed = parseRecordStream(log(change(signed(key))), { key });
    expect(parsed).toMatchObject({ complete: false, forged: "tampered", records: [], files: [] });
    if ("forged" in parsed) expect(parsed.problem).toMatch(/does not carry its runner's signature/);
  });

  it.each([
    ["unsigned", lines],
    ["signed with another Job's key", signed(otherJob)],
  ])("takes a stream %s for no stream of its runner's", (_what, text) => {
    const parsed = parseRecordStream(log(text), { key });
    expect(parsed).toMatchObject({ complete: false, forged: "unsigned", records: [] });
    if ("forged" in parsed)
      expect(parsed.problem).toMatch(/none of its 5 stream lines carries its Job's signature/);
  });

  it("tells a stream cut short (in its last line or before its trailer) from a forged one", () => {
    const whole = signed(key).join("");
    const cut = parseRecordStream(whole.slice(0, whole.lastIndexOf("@@") + 30), { key });
    expect(cut).toMatchObject({
      complete: false,
      problem: expect.stringMatching(/its last line does not verify/),
    });
    expect("forged" in cut).toBe(false);
    const noTrailer = parseRecordStream(log(signed(key).slice(0, -1)), { key });
    expect(noTrailer).toMatchObject({
      complete: false,
      problem: expect.stringMatching(/no end-of-stream trailer after 2/),
    });
    expect(parseRecordStream("exec format error\n", { key })).toMatchObject({
      complete: false,
      problem: expect.stringMatching(/no records and no end-of-stream trailer/),
    });
  });

  it("is read without a key only by a collector that expects none: its lines are not /v1", () => {
    expect(parseRecordStream(log(signed(key)))).toMatchObject({
      complete: false,
      problem: expect.stringMatching(/no records and no end-of-stream trailer/),
    });
    expect(() => createStreamSigner(key)("noise\n")).toThrow(/only whole stream lines/);
  });
});

const file = (path: string, content: Buffer, firstSequence = 0) =>
  formatFileLines({ firstSequence, arm: "pr", component: "ovn-kubernetes", path, content });

describe("artifact files in the record stream", () => {
  const big = randomBytes(FILE_CHUNK_BYTES * 2 + 17);
  const small = Buffer.from("flows\n");
  const empty = Buffer.alloc(0);

  it("carries files of any size whole, in lines of bounded length, between the records and the trailer", () => {
    const lines = [...file("flows/big.bin", big), ...file("small.txt", small, 3), ...file("empty", empty, 4)];
    expect(lines).toHaveLength(5);
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(48 * 1024);
    const log = stream(["a"]) + lines.join("") + formatStreamTrailer(1, "completed");
    const parsed = parseRecordStream(log);
    expect(parsed).toMatchObject({ complete: true, omitted: [] });
    expect(parsed.records.map((r) => r.name)).toEqual(["a"]);
    expect(parsed.files.map((f) => [f.path, f.content.length])).toEqual([
      ["flows/big.bin", big.length],
      ["small.txt", small.length],
      ["empty", 0],
    ]);
    expect(parsed.files[0]!.content.equals(big)).toBe(true);
  });

  it.each([
    ["a lost chunk", (l: string[]) => [l[0]!, l[2]!], /lost/],
    [
      "a chunk cut in half",
      (l: string[]) => [l[0]!, l[1]!.slice(0, 5000) + "\n", l[2]!],
      /not base64|cut|not framed/,
    ],
    [
      "a chunk whose bytes changed",
      (l: string[]) => [l[0]!, l[1]!.replace(/ [A-Za-z0-9+/]{8}/, " AAAAAAAA"), l[2]!],
      /SHA-256/,
    ],
    ["a missing last chunk", (l: string[]) => [l[0]!, l[1]!], /cut: 65536 of its 65553 bytes arrived/],
  ])("drops a file with %s and keeps the records and the other files", (_what, damage, reason) => {
    const log =
      stream(["a", "b"]) +
      damage(file("big.bin", big)).join("") +
      file("small.txt", small, 3).join("") +
      formatStreamTrailer(2, "completed");
    const parsed = parseRecordStream(log);
    expect(parsed.complete).toBe(true);
    expect(parsed.records).toHaveLength(2);
    expect(parsed.files.map((f) => f.path)).toEqual(["small.txt"]);
    expect(parsed.omitted.map((o) => o.reason).join("; ")).toMatch(reason);
    expect(parsed.omitted.find((o) => o.path === "big.bin")).toBeDefined();
  });

  it("keeps the records' rules: a log cut among the files is an incomplete stream, its whole files still read", () => {
    const lines = [...file("small.txt", small), ...file("big.bin", big, 1)];
    const parsed = parseRecordStream(stream(["a"]) + lines.slice(0, 2).join(""));
    expect(parsed).toMatchObject({ complete: false, records: [{ name: "a" }] });
    expect(parsed.files.map((f) => f.path)).toEqual(["small.txt"]);
    expect(parsed.omitted).toMatchObject([{ path: "big.bin", reason: expect.stringMatching(/^cut:/) }]);
  });

  it("bounds what it assembles and lists what the pod left out", () => {
    const log =
      stream(["a"]) +
      file("big.bin", big).join("") +
      file("small.txt", small, 3).join("") +
      formatOmittedLine({
        arm: "pr",
        component: "ovn-kubernetes",
        path: "huge.pcap",
        size: 9e6,
        reason: "over budget",
      }) +
      formatStreamTrailer(1, "completed");
    const parsed = parseRecordStream(log, { maxFileBytes: 1000 });
    expect(parsed.files.map((f) => f.path)).toEqual(["small.txt"]);
    expect(parsed.omitted.map((o) => [o.path, o.reason])).toEqual([
      ["big.bin", "over the collector's limit of 1000 bytes per iteration"],
      ["huge.pcap", "over budget"],
    ]);
  });
});

describe("saving an iteration's artifacts", () => {
  let dir: { path: string; remove: () => Promise<void> };
  beforeAll(async () => {
    dir = await tempDir();
  });
  afterAll(() => dir.remove());

  const streamed = (path: string, content = "x", component = "ovn-kubernetes") => ({
    arm: "pr" as const,
    component,
    path,
    content: Buffer.from(content),
  });

  it("writes plain relative paths under the iteration, refuses hostile ones with a reason and never overwrites", async () => {
    const outDir = join(dir.path, "shard");
    await mkdir(join(dir.path, "outside"), { recursive: true });
    const save = createArtifactSaver({
      outDir,
      components: { pr: ["ovn-kubernetes"] },
      limits: { iterationBytes: 100, iterationFiles: 3, runBytes: 50 },
    });
    const index = await save({
      iteration: 4,
      omitted: [],
      files: [
        streamed("flows/node-a.txt", "a"),
        streamed("../../../outside/escaped"),
        streamed("/etc/passwd"),
        streamed("a/./b"),
        streamed("nul\u0000name"),
        streamed(`${"d/".repeat(20)}deep`),
        streamed("x".repeat(300)),
        streamed("ok", "y", "../ovn-kubernetes"),
        streamed("other", "y", "sdn"),
        { ...streamed("baseline-only"), arm: "baseline" as const },
        streamed("too-big", "z".repeat(101)),
      ],
    });
    expect(index?.files).toEqual([
      { arm: "pr", component: "ovn-kubernetes", path: "flows/node-a.txt", bytes: 1 },
    ]);
    const reasons = index!.omitted.map((o) => o.reason);
    expect(reasons).toEqual([
      expect.stringMatching(/"\.\." name/),
      expect.stringMatching(/absolute/),
      expect.stringMatching(/"\." name/),
      expect.stringMatching(/control character/),
      expect.stringMatching(/deeper than 16/),
      expect.stringMatching(/longer than 255 bytes/),
      expect.stringMatching(/no component named/),
      expect.stringMatching(/no component named "sdn"/),
      expect.stringMatching(/runs no baseline arm/),
      expect.stringMatching(/100 bytes per iteration/),
    ]);
    expect(await readdir(join(dir.path, "outside"))).toEqual([]);
    expect(
      await readFile(join(outDir, "artifacts/iteration-4/pr/ovn-kubernetes/flows/node-a.txt"), "utf8"),
    ).toBe("a");
    expect(JSON.parse(await readFile(join(outDir, "artifacts/iteration-4.json"), "utf8"))).toEqual(index);

    // A second collection of the same iteration keeps the first file, and the run's budget holds.
    const again = await save({
      iteration: 4,
      omitted: [],
      files: [streamed("flows/node-a.txt", "changed"), streamed("more", "m".repeat(90))],
    });
    expect(again!.omitted.map((o) => o.reason)).toEqual([
      expect.stringMatching(/collected before; it is kept/),
      expect.stringMatching(/50 bytes of artifacts per run/),
    ]);
    expect(
      await readFile(join(outDir, "artifacts/iteration-4/pr/ovn-kubernetes/flows/node-a.txt"), "utf8"),
    ).toBe("a");
    // Nothing half-written is left beside the files.
    expect((await readdir(join(outDir, "artifacts/iteration-4/pr/ovn-kubernetes/flows"))).sort()).toEqual([
      "node-a.txt",
    ]);
  });

  it("names at most 200 files it did not collect, and counts the rest", async () => {
    const save = createArtifactSaver({
      outDir: join(dir.path, "many"),
      components: { pr: ["ovn-kubernetes"] },
    });
    const omitted = Array.from({ length: 1000 }, (_, i) => ({ path: `f${i}`, reason: "over budget" }));
    const index = await save({ iteration: 0, omitted, files: [] });
    expect(index!.omitted).toHaveLength(201);
    expect(index!.omitted.at(-1)).toEqual({ reason: "and 800 more file(s) not collected" });
  });

  it("refuses a file whose path runs through another file", async () => {
    const save = createArtifactSaver({
      outDir: join(dir.path, "clash"),
      components: { pr: ["ovn-kubernetes"] },
    });
    const index = await save({ iteration: 0, omitted: [], files: [streamed("a"), streamed("a/b")] });
    expect(index!.files.map((f) => f.path)).toEqual(["a"]);
    expect(index!.omitted[0]!.reason).toMatch(/clashes/);
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
          { name: "[sig-network] passes", durationMs: [1, 2], artifact: "flows" },
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
    // The files the binary wrote travel in the stream, named as in its artifact directory.
    expect(parsed.files.map((f) => [f.arm, f.component, f.path]).sort()).toEqual([
      ["pr", "ovn-kubernetes", "flows-pr-40-0.txt"],
      ["pr", "ovn-kubernetes", "flows-pr-41-0.txt"],
    ]);
    expect(parsed.files[0]!.content.toString()).toBe("[sig-network] passes\n");
    expect(parsed.omitted).toEqual([]);
  });

  it("signs every line with the key of --stream-key-file, which its output never shows", async () => {
    const key = randomBytes(32);
    const keyFile = join(dir.path, "stream-key");
    await writeFile(keyFile, `${key.toString("hex")}\n`);
    const args = ["run", "--binary", `ovn-kubernetes=${binary}`, "--iterations", "1", "--retries", "0"];
    const result = await runNetstress([
      ...args,
      "--stream-records",
      "--stream-key-file",
      keyFile,
      "--out",
      join(dir.path, "signed"),
    ]);
    expect(result.code).toBe(0);
    const parsed = parseRecordStream(result.stdout, { key });
    expect(parsed).toMatchObject({ complete: true, status: "completed" });
    expect(parsed.records).toHaveLength(2);
    expect(parsed.files).toHaveLength(1);
    expect(result.stdout + result.stderr).not.toContain(key.toString("hex"));
    const unsigned = await runNetstress([
      ...args,
      "--stream-key-file",
      keyFile,
      "--out",
      join(dir.path, "x"),
    ]);
    expect(unsigned.code).not.toBe(0);
    expect(unsigned.stderr).toMatch(/--stream-key-file signs the record stream: add --stream-records/);
  });

  it("lists the files over its stream budget as omitted, and the stream stays whole", async () => {
    const result = await runNetstress([
      "run",
      "--binary",
      `ovn-kubernetes=${binary}`,
      "--iterations",
      "1",
      "--retries",
      "0",
      "--stream-records",
      "--stream-artifact-bytes",
      "10",
      "--out",
      join(dir.path, "budget"),
    ]);
    expect(result.code).toBe(0);
    const parsed = parseRecordStream(result.stdout);
    expect(parsed).toMatchObject({ complete: true, files: [] });
    expect(parsed.omitted).toEqual([
      {
        arm: "pr",
        component: "ovn-kubernetes",
        path: "flows-pr-0-0.txt",
        size: 21,
        reason: expect.stringMatching(/over the pod's stream budget of 10 bytes/),
      },
    ]);
  });
});
