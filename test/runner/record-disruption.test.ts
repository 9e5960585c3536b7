import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSampleBinary } from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { executeRun } from "../../src/runner/execute-run.ts";
import { readResultRecords } from "../../src/runner/read-result-records.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const INVARIANT = "[sig-network][Invariant] pod-to-service should stay reachable";
const disruption = {
  path: "pod-to-service",
  connection: "reused",
  observedSeconds: 30,
  disruptedSeconds: 2,
  budgetSeconds: 5,
  intervals: [{ from: "2025-01-01T00:00:10Z", to: "2025-01-01T00:00:12Z", reason: "connection reset" }],
};

let dir: { path: string; remove: () => Promise<void> };
let binary: string;
beforeAll(async () => {
  dir = await tempDir();
  binary = await writeSampleBinary({
    suite: {
      component: "netstress",
      commit: "0".repeat(40),
      buildDate: "2026-01-01T00:00:00Z",
      tests: [
        {
          name: INVARIANT,
          durationMs: [1, 2],
          details: [
            { name: "netstress.disruption", value: [disruption, { ...disruption, connection: "sideways" }] },
          ],
        },
      ],
    },
    path: join(dir.path, "netstress-tests-ext"),
  });
});
afterAll(() => dir.remove());

describe("a result's disruption detail in results.jsonl", () => {
  it("is copied into the record, and a malformed entry is noted, not fatal", async () => {
    const { paths } = await executeRun({
      plan: { arch: hostArch(), arms: [{ arm: "pr", components: [{ component: "netstress", binary }] }] },
      outDir: join(dir.path, "run"),
      iterations: 1,
      parallel: 1,
      seed: "s",
      timeoutMs: 30_000,
      retries: 0,
    });
    const records: ResultRecord[] = [];
    for await (const record of readResultRecords(paths.results)) records.push(record);
    expect(records).toHaveLength(1);
    expect(records[0]!.result).toBe("passed");
    expect(records[0]!.disruption).toEqual([disruption]);
    expect(records[0]!.harnessNotes).toEqual([
      expect.stringMatching(/netstress\.disruption\[1\] dropped: connection/),
    ]);
    expect(records[0]!.details).toHaveLength(1);
  });
});
