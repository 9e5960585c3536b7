import { describe, expect, it } from "vitest";
import type { PayloadCounts } from "../../src/analysis/payload-counts.ts";
import { buildTrendView } from "../../src/report/trend-view.ts";

const payload = (index: number, tests: PayloadCounts["tests"]): PayloadCounts => ({
  release: `4.20.0-0.nightly-${index}`,
  payload: `quay.io/ocp/release@sha256:${String(index).repeat(64)}`,
  recordedAt: new Date(Date.UTC(2026, 10, index + 1)).toISOString(),
  runs: 1,
  tests,
});

describe("the trend view", () => {
  it("charts each test on the payloads it ran on, ranks by how much it moved, and says why changes are unknown", () => {
    const history = [
      payload(1, {
        old: { executions: 10, failures: 0, flakes: 0 },
        worse: { executions: 10, failures: 0, flakes: 0 },
      }),
      payload(2, {
        old: { executions: 10, failures: 1, flakes: 0 },
        worse: { executions: 10, failures: 0, flakes: 0 },
      }),
      payload(3, {
        worse: { executions: 10, failures: 2, flakes: 2 },
        fresh: { executions: 10, failures: 0, flakes: 0 },
      }),
    ];
    const view = buildTrendView({
      stream: "4.20.0-0.nightly",
      arch: "arm64",
      history,
      changes: [undefined, { from: "1", to: "2", changes: [], unchanged: 4 }, new Error("manifest unknown")],
      firstBad: { findings: [], familySize: 0, q: 0.05 },
    });
    expect(view.tests.map((t) => [t.name, t.moved])).toEqual([
      // 6/10 now against 20/20 before; 9/10 on its last payload against 10/10; a new test has no past.
      ["worse", -40],
      ["old", -10],
      ["fresh", null],
    ]);
    const worse = view.tests[0]!;
    expect(worse.rates.map((r) => r && r.slice(3))).toEqual([
      [10, 0, 0],
      [10, 0, 0],
      [10, 4, 2],
    ]);
    expect(view.tests[1]!.rates[2]).toBeNull();
    expect(view.tests[2]).toMatchObject({ earlier: null, rates: [null, null, [1, 0.7225, 1, 10, 0, 0]] });
    expect(view.payloads.map((p) => p.changes)).toEqual([
      null,
      { known: true, changes: [], unchanged: 4 },
      { known: false, reason: "manifest unknown" },
    ]);
    expect(view.firstBadScan).toEqual({ q: 0.05, familySize: 0 });
  });
});
