import { describe, expect, it } from "vitest";
import type { PayloadCounts } from "../../src/analysis/payload-counts.ts";
import { baselineHistory } from "../../src/runs/baseline-history.ts";
import type { PrRun } from "../../src/runs/run-record.ts";
import { runRecord } from "../helpers/github-run-deps.ts";

const digest = (n: number) =>
  `quay.io/openshift-release-dev/ocp-release@sha256:${String(n).repeat(64).slice(0, 64)}`;
const counts = (n: number): PayloadCounts => ({
  release: `4.19.0-0.nightly-2026-12-0${n}-000000`,
  payload: digest(n),
  recordedAt: `2026-12-0${n}T00:00:00.000Z`,
  runs: 1,
  tests: { "[sig-network] a": { executions: 10, failures: n, flakes: 0 } },
});
const STREAM = [counts(1), counts(2), counts(3)];

const run = (baseline: string | undefined, releaseStream = "4.19.0-0.nightly"): PrRun => {
  const base = runRecord();
  return runRecord({
    source: { ...base.source, ...(releaseStream ? { releaseStream } : {}) },
    ...(baseline ? { payloads: { pr: "quay.io/ci/pr@sha256:" + "f".repeat(64), baseline } } : {}),
  });
};

describe("baselineHistory", () => {
  it("keeps the stream's payloads up to and including the baseline payload, counts only", () => {
    // The same digest under another repository is the same payload.
    const got = baselineHistory(
      run(digest(2).replace("quay.io/openshift-release-dev", "mirror.local")),
      STREAM,
    );
    expect(got.map((p) => p.release)).toEqual([STREAM[0]!.release, STREAM[1]!.release]);
    expect(got[1]).toEqual({ release: STREAM[1]!.release, payload: digest(2), tests: STREAM[1]!.tests });
  });

  it("gives none to a baseline payload the stream never recorded, or a run without a stream or baseline", () => {
    expect(baselineHistory(run("quay.io/ci/other@sha256:" + "e".repeat(64)), STREAM)).toEqual([]);
    expect(baselineHistory(run(digest(3), ""), STREAM)).toEqual([]);
    expect(baselineHistory(run(undefined), STREAM).length).toBe(0);
  });
});
