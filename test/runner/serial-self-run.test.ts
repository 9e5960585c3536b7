import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { parseOteTimestamp } from "../../src/ote/parse-ote-timestamp.ts";
import { executeRun } from "../../src/runner/execute-run.ts";
import { readResultRecords } from "../../src/runner/read-result-records.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const BINARY = new URL("../../packages/testbed/src/ginkgo-ext/ginkgo-tests-ext.mjs", import.meta.url)
  .pathname;
const SERIAL_SELF = "[sig-network] ginkgo-ext reconfigures the node's MTU [Serial:Self]";

let dir: { path: string; remove: () => Promise<void> };
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

const ENDPOINTS = Array.from(
  { length: 8 },
  (_, i) =>
    `[sig-network] ginkgo-ext endpoints answer on port ${8001 + i} [Suite:openshift/conformance/parallel]`,
);

const interval = (r: ResultRecord) => ({
  start: parseOteTimestamp(r.startTime!)!.getTime(),
  end: parseOteTimestamp(r.endTime!)!.getTime(),
});
const overlap = (a: ResultRecord, b: ResultRecord) => {
  const [x, y] = [interval(a), interval(b)];
  return x.start < y.end && y.start < x.end;
};

describe("[Serial:Self] tests", () => {
  it("never overlap a copy of themselves, in either arm or any iteration, while other tests run beside them", async () => {
    // The sample fails a [Serial:Self] spec while another copy holds its lock.
    const locks = join(dir.path, "locks");
    await mkdir(locks);
    const { paths } = await executeRun({
      plan: {
        arch: hostArch(),
        arms: (["pr", "baseline"] as const).map((arm) => ({
          arm,
          components: [{ component: "ginkgo", binary: BINARY, tests: [SERIAL_SELF, ...ENDPOINTS] }],
        })),
      },
      outDir: join(dir.path, "run"),
      iterations: 4,
      parallel: 8,
      seed: "serial-self",
      timeoutMs: 30_000,
      retries: 0,
      env: { ...process.env, KUBECONFIG: "", GINKGO_EXT_LOCK_DIR: locks },
    });
    const records: ResultRecord[] = [];
    for await (const r of readResultRecords(paths.results)) records.push(r);
    const copies = records.filter((r) => r.name === SERIAL_SELF);
    expect(copies).toHaveLength(2 * 4);
    expect(copies.filter((r) => r.result !== "passed").map((r) => r.error)).toEqual([]);
    for (const [i, a] of copies.entries()) {
      for (const b of copies.slice(i + 1)) expect(overlap(a, b)).toBe(false);
    }
    expect(copies.some((c) => c.ranAlone)).toBe(false);
    const others = records.filter((r) => r.name !== SERIAL_SELF);
    expect(copies.some((c) => others.some((o) => overlap(c, o)))).toBe(true);
  }, 60_000);
});
