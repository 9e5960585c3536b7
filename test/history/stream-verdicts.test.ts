import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createHistoryStore, type HistoryStore } from "../../src/history/history-store.ts";
import { createRunAnalyzer } from "../../src/history/run-analyzer.ts";
import { periodicRunRecord } from "../../src/periodic/periodic-run-record.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import type { RunRecord } from "../../src/runs/run-record.ts";
import { armRecords } from "../analysis/make-records.ts";
import { runRecord } from "../helpers/github-run-deps.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const BROKEN = "[sig-network] egress firewall blocks what it should";
const FLAKY = "[sig-network] services answer on a NodePort";
const STABLE = "[sig-network] pods reach pods";
const STREAM = "4.19.0-0.nightly";

let redis: Redis;
let history: HistoryStore;
let dir: Awaited<ReturnType<typeof tempDir>>;
const log = pino({ level: "silent" });

beforeAll(async () => {
  redis = new Redis(inject("redisUrl"));
  history = createHistoryStore({ redis, prefix: `test-stream-verdicts-${process.pid}-${Date.now()}` });
  dir = await tempDir();
});
afterAll(async () => {
  await redis.quit();
  await dir.remove();
});

const release = (day: number) => ({
  name: `4.19.0-0.nightly-2026-11-${String(day).padStart(2, "0")}-000000`,
  pullSpec: `quay.io/ocp/release@sha256:${String(day).padStart(64, "0")}`,
});

/**
 * Twelve nightlies of 30 iterations: BROKEN failed once in a while until the ninth, a quarter of
 * its iterations from it on; FLAKY flaked on every one; STABLE never failed.
 */
async function fillStream(stream: string): Promise<void> {
  for (let day = 1; day <= 12; day++) {
    const { name, pullSpec } = release(day);
    await history.record({
      stream,
      arch: "amd64",
      runId: `nightly-${day}`,
      at: new Date(Date.now() - (13 - day) * 3600_000),
      payload: { pullspec: pullSpec, release: name },
      tests: [
        { name: BROKEN, runs: 30, passes: day >= 9 ? 22 : 30 - (day % 4 === 0 ? 1 : 0) },
        { name: FLAKY, runs: 30, passes: 27, flakes: 3 },
        { name: STABLE, runs: 30, passes: 30 },
      ],
    });
  }
}

async function resultsFile(name: string, records: ResultRecord[]): Promise<string> {
  const path = join(dir.path, `${name}.jsonl`);
  await writeFile(path, records.map((record) => JSON.stringify(record)).join("\n") + "\n");
  return path;
}

const prRun = (stream: string): RunRecord => {
  const { source } = runRecord();
  return runRecord({
    options: { iterations: 10, baseline: "history" },
    source: { ...source, releaseStream: stream },
    state: "analyzing",
  });
};

describe("a PR run on a stream with a history per payload", () => {
  it("does not blame the PR for a test failing on the stream since a payload, nor for a test flaky on it", async () => {
    const stream = `${STREAM}-pr`;
    await fillStream(stream);
    const pr = await resultsFile("pr", [
      ...armRecords({ name: BROKEN, arm: "pr", runs: 10, failed: 6 }),
      ...armRecords({ name: FLAKY, arm: "pr", runs: 10, failed: 7 }),
      ...armRecords({ name: STABLE, arm: "pr", runs: 10 }),
    ]);
    // Without the history's verdicts both tests regress against the pool.
    const plain = await createRunAnalyzer({ history, log })({
      run: prRun(stream),
      resultsPaths: [pr],
      outDir: join(dir.path, "unaware"),
    });
    expect(plain.conclusion).toBe("failure");

    const analyze = createRunAnalyzer({ history, log, flakyPayloads: 5 });
    const result = await analyze({ run: prRun(stream), resultsPaths: [pr], outDir: join(dir.path, "aware") });
    expect(result.conclusion).not.toBe("failure");
    const text = result.output.text ?? "";
    expect(text).toContain(
      `quarantined since ${new Date(Date.now() - 4 * 3600_000).toISOString().slice(0, 10)}: also failing on ${stream} since ${release(9).name}: not caused by this PR`,
    );
    expect(text).toMatch(
      /quarantined since \d{4}-\d\d-\d\d: flaky on 4\.19\.0-0\.nightly-pr on each of its last 12 payloads \(quarantined after 5\)/,
    );
  });

  it("keeps a configured entry as it is, and quarantines nothing from the history when K is 0", async () => {
    const stream = `${STREAM}-configured`;
    await fillStream(stream);
    const pr = await resultsFile("pr-configured", [
      ...armRecords({ name: BROKEN, arm: "pr", runs: 10, failed: 6 }),
      ...armRecords({ name: FLAKY, arm: "pr", runs: 10, failed: 7 }),
    ]);
    const configured = [{ test: BROKEN, reason: "OCPBUGS-42: egress firewall", since: "2026-11-02" }];
    const result = await createRunAnalyzer({ history, log, quarantine: configured })({
      run: prRun(stream),
      resultsPaths: [pr],
      outDir: join(dir.path, "configured"),
    });
    // FLAKY is not quarantined (K = 0) and regressed: the PR fails on it alone.
    expect(result.conclusion).toBe("failure");
    expect(result.output.text).toContain("quarantined since 2026-11-02: OCPBUGS-42: egress firewall");
    expect(result.output.text).not.toContain("flaky on");
  });
});

describe("a periodic run", () => {
  it("names the first bad payload its payload made visible, once", async () => {
    const stream = `${STREAM}-periodic`;
    // Nine nightlies; BROKEN rose on the ninth: one payload cannot tell it from a bad cluster.
    for (let day = 1; day <= 9; day++) {
      const { name, pullSpec } = release(day);
      await history.record({
        stream,
        arch: "amd64",
        runId: `nightly-${day}`,
        at: new Date(Date.now() - (13 - day) * 3600_000),
        payload: { pullspec: pullSpec, release: name },
        tests: [{ name: BROKEN, runs: 30, passes: day >= 9 ? 22 : 30 - (day % 4 === 0 ? 1 : 0) }],
      });
    }
    const periodic = {
      name: "nightly",
      stream,
      arches: ["amd64" as const],
      cron: "0 * * * *",
      iterations: 30,
      parallel: 4,
      timeout_minutes: 60,
    };
    const analyze = createRunAnalyzer({ history, log });
    const results = await resultsFile(
      "periodic",
      armRecords({ name: BROKEN, arm: "pr", runs: 30, failed: 9 }),
    );
    const run = periodicRunRecord({ periodic, arch: "amd64", release: release(10), now: new Date() });
    const first = await analyze({ run, resultsPaths: [results], outDir: join(dir.path, "periodic-10") });
    expect(first.output.summary).toContain(`First bad payload newly found on ${stream} (amd64)`);
    expect(first.output.summary).toContain(
      `egress firewall blocks what it should: since **${release(9).name}**`,
    );
    // The next nightly adds nothing new to say.
    const next = periodicRunRecord({ periodic, arch: "amd64", release: release(12), now: new Date() });
    const second = await analyze({
      run: next,
      resultsPaths: [results],
      outDir: join(dir.path, "periodic-12"),
    });
    expect(second.output.summary).not.toContain("First bad payload");
  });

  it("names the tests that failed more often on its arch than on the others on its payload", async () => {
    const stream = `${STREAM}-cross-arch`;
    for (const arch of ["amd64", "arm64"] as const) {
      for (let day = 1; day <= 7; day++) {
        // The seventh nightly has run on amd64 only so far.
        if (arch === "arm64" && day === 7) continue;
        const { name, pullSpec } = release(day);
        await history.record({
          stream,
          arch,
          runId: `nightly-${day}-${arch}`,
          at: new Date(Date.now() - (13 - day) * 3600_000),
          payload: { pullspec: pullSpec, release: name },
          tests: [{ name: BROKEN, runs: 30, passes: 30 - (day % 3 === 0 ? 1 : 0) }],
        });
      }
    }
    const periodic = {
      name: "nightly",
      stream,
      arches: ["amd64" as const, "arm64" as const],
      cron: "0 * * * *",
      iterations: 30,
      parallel: 4,
      timeout_minutes: 60,
    };
    const results = await resultsFile(
      "arm64-only",
      armRecords({ name: BROKEN, arm: "pr", runs: 30, failed: 14 }),
    );
    const run = periodicRunRecord({ periodic, arch: "arm64", release: release(7), now: new Date() });
    const analyzed = await createRunAnalyzer({ history, log })({
      run,
      resultsPaths: [results],
      outDir: join(dir.path, "cross-arch"),
    });
    expect(analyzed.output.summary).toContain(`**Cross-arch** (amd64, arm64)`);
    expect(analyzed.output.summary).toContain(
      "egress firewall blocks what it should: 14/30 on **arm64** against 0/30 on the others",
    );
  });
});
