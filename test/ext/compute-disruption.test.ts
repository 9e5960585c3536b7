import { describe, expect, it } from "vitest";
import { computeDisruption, type ExpectedPair } from "@netstress/network-extension/compute-disruption.ts";
import type { ProbeStateLine } from "@netstress/network-extension/probe-line.ts";

const t0 = Date.parse("2026-01-01T00:00:00.000Z");
const at = (s: number) => new Date(t0 + s * 1000).toISOString();
const pair = (source: string, target: string): ExpectedPair => ({
  path: "pod-to-pod-cross-node",
  connection: "new",
  source,
  target,
});
const line = (p: ExpectedPair, s: number, ok: boolean, reason?: string): ProbeStateLine => ({
  netstress: "probe",
  event: "state",
  ...p,
  ok,
  ...(reason ? { reason } : {}),
  at: at(s),
});
const window = { from: new Date(t0), to: new Date(t0 + 60_000) };

describe("disruption from probe state lines", () => {
  it("counts a path as failing from the failed probe to the next good one, with the interval and its reason", () => {
    const a = pair("client pod on w0", "server pod on w1");
    const [d] = computeDisruption({
      expected: [a],
      lines: [line(a, 0.2, true), line(a, 10, false, "ETIMEDOUT"), line(a, 12.5, true)],
      window,
      budgetSeconds: 0,
    });
    expect(d).toMatchObject({
      path: "pod-to-pod-cross-node",
      connection: "new",
      observedSeconds: 60,
      disruptedSeconds: 2.5,
    });
    expect(d!.intervals).toEqual([
      { from: at(10), to: at(12.5), reason: "ETIMEDOUT", source: a.source, target: a.target },
    ]);
  });

  it("adds overlapping failures of two pairs once, and keeps both intervals", () => {
    const a = pair("client pod on w0", "server pod on w1");
    const b = pair("client pod on w1", "server pod on w0");
    const [d] = computeDisruption({
      expected: [a, b],
      lines: [
        line(a, 0, true),
        line(b, 0, true),
        line(a, 10, false, "x"),
        line(b, 11, false, "y"),
        line(a, 13, true),
        line(b, 14, true),
      ],
      window,
      budgetSeconds: 1,
    });
    expect(d!.disruptedSeconds).toBe(4);
    expect(d!.intervals).toHaveLength(2);
    expect(d!.budgetSeconds).toBe(1);
  });

  it("keeps a failure still going at the end open to the end, and clips what began before the window", () => {
    const a = pair("client pod on w0", "server pod on w1");
    const [d] = computeDisruption({
      expected: [a],
      lines: [line(a, -5, false, "refused"), line(a, 3, true), line(a, 55, false, "reset")],
      window,
      budgetSeconds: 0,
    });
    expect(d!.disruptedSeconds).toBe(8);
    expect(d!.intervals.map((i) => [i.from, i.to])).toEqual([
      [at(0), at(3)],
      [at(55), at(60)],
    ]);
  });

  it("counts a pair that never reported as failing for the whole window", () => {
    const a = pair("client pod on w0", "server pod on w1");
    const [d] = computeDisruption({ expected: [a], lines: [], window, budgetSeconds: 0 });
    expect(d).toMatchObject({ disruptedSeconds: 60, intervals: [{ reason: "no probe result" }] });
  });

  it("reports nothing disrupted on a path whose probes all held", () => {
    const a = pair("client pod on w0", "server pod on w1");
    const [d] = computeDisruption({ expected: [a], lines: [line(a, 0.5, true)], window, budgetSeconds: 0 });
    expect(d).toMatchObject({ disruptedSeconds: 0, intervals: [] });
  });
});
