import { describe, expect, it } from "vitest";
import { readDisruption } from "../../src/runner/read-disruption.ts";
import { resultRecordSchema } from "@netstress/core/model/result-record.ts";

const entry = (overrides: Record<string, unknown> = {}) => ({
  path: "pod-to-pod-cross-node",
  connection: "new",
  observedSeconds: 60,
  disruptedSeconds: 2,
  budgetSeconds: 1,
  intervals: [
    {
      from: "2025-01-01T00:00:10Z",
      to: "2025-01-01T00:00:12Z",
      reason: "connect timeout",
      source: "node-a",
      target: "node-b",
    },
  ],
  ...overrides,
});
const details = (value: unknown, name = "netstress.disruption") => [
  { name: "other", value: 1 },
  { name, value },
];

describe("readDisruption", () => {
  it("returns the reported entries, and nothing for a result without the detail", () => {
    expect(readDisruption({ details: details([entry(), entry({ connection: "reused" })]) })).toEqual({
      disruption: [entry(), entry({ connection: "reused" })],
    });
    expect(readDisruption({ details: undefined })).toEqual({});
    expect(readDisruption({ details: [{ name: "other", value: [] }] })).toEqual({});
    expect(readDisruption({ details: { name: "netstress.disruption" } })).toEqual({});
  });

  it("reads a value given as a JSON string", () => {
    expect(readDisruption({ details: details(JSON.stringify([entry()])) }).disruption).toEqual([entry()]);
  });

  it("drops each malformed entry with a reason and keeps the rest", () => {
    const read = readDisruption({
      details: details([
        entry({ disruptedSeconds: 61 }),
        entry({ path: "Pod To Pod" }),
        entry({ intervals: [{ from: "2025-01-01T00:00:12Z", to: "2025-01-01T00:00:10Z", reason: "x" }] }),
        entry({ intervals: [{ from: "yesterday", to: "2025-01-01T00:00:10Z", reason: "x" }] }),
        { path: "pod-to-service" },
        entry({ path: "pod-to-service" }),
        entry({ path: "pod-to-service", disruptedSeconds: 0 }),
      ]),
    });
    expect(read.disruption).toEqual([entry({ path: "pod-to-service" })]);
    expect(read.harnessNotes).toHaveLength(6);
    expect(read.harnessNotes![0]).toMatch(/\[0\] dropped: disruptedSeconds: .*larger than observedSeconds/);
    expect(read.harnessNotes![1]).toMatch(/\[1\] dropped: path: .*kebab-case/);
    expect(read.harnessNotes![2]).toMatch(/\[2\] dropped: intervals\.0: an interval ends before it starts/);
    expect(read.harnessNotes![3]).toMatch(/\[3\] dropped: intervals\.0\.from/);
    expect(read.harnessNotes![4]).toMatch(/\[4\] dropped: connection/);
    expect(read.harnessNotes![5]).toMatch(/\[6\] dropped: pod-to-service new was already reported/);
  });

  it("says so when the value is not an array, and keeps an empty list as reported", () => {
    expect(readDisruption({ details: details({ path: "x" }) })).toEqual({
      disruption: [],
      harnessNotes: ["netstress.disruption: its value is not an array of disruption entries; dropped"],
    });
    expect(readDisruption({ details: details("{not json") }).harnessNotes).toEqual([
      "netstress.disruption: its value is a string that is not JSON; dropped",
    ]);
    expect(readDisruption({ details: details([]) })).toEqual({ disruption: [] });
  });

  it("cuts a flapping path's intervals and counts what it left out", () => {
    const interval = entry().intervals[0]!;
    const read = readDisruption({
      details: details([entry({ intervals: Array.from({ length: 520 }, () => interval) })]),
    });
    expect(read.disruption![0]!.intervals).toHaveLength(500);
    expect(read.disruption![0]!.intervalsOmitted).toBe(20);
    expect(read.disruption![0]!.disruptedSeconds).toBe(2);
    expect(read.harnessNotes).toEqual([
      "pod-to-pod-cross-node new: 20 interval(s) beyond the first 500 not kept",
    ]);
  });

  it("gives fields a result record accepts", () => {
    const record = {
      name: "t",
      lifecycle: "blocking",
      duration: 1,
      result: "failed",
      arm: "pr",
      arch: "amd64",
      iteration: 0,
      component: "netstress",
      ...readDisruption({ details: details([entry(), { nope: true }]) }),
    };
    const parsed = resultRecordSchema.parse(record);
    expect(parsed.disruption).toEqual([entry()]);
    expect(parsed.harnessNotes).toHaveLength(1);
  });

  it("bounds the notes of a result full of bad entries", () => {
    const read = readDisruption({ details: details(Array.from({ length: 40 }, () => ({}))) });
    expect(read.harnessNotes).toHaveLength(11);
    expect(read.harnessNotes!.at(-1)).toBe("further disruption notes left out");
  });
});
