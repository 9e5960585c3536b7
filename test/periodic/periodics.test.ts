import { rename, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { Queue } from "bullmq";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SettingsError } from "../../src/config/bot-settings.ts";
import {
  loadPeriodicsConfig,
  periodicsConfigSchema,
  type PeriodicsConfig,
} from "../../src/config/periodics-config.ts";
import { createReleaseController } from "../../src/payload/release-controller.ts";
import { periodicRunRecord } from "../../src/periodic/periodic-run-record.ts";
import { PERIODIC_QUEUE, startPeriodics } from "../../src/periodic/start-periodics.ts";
import { createHistoryStore } from "../../src/history/history-store.ts";
import { createRunAnalyzer } from "../../src/history/run-analyzer.ts";
import { armRecords } from "../analysis/make-records.ts";
import { eventually } from "../helpers/github-api.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { runMachinery } from "../helpers/run-machinery.ts";

let server: Server;
let url: string;
// The release-controller answers pullSpec in tag form, the release's name as the tag.
let latest = {
  name: "4.19.0-0.nightly-2026-12-01-000000",
  pullSpec: "registry.ci.openshift.org/ocp/release:4.19.0-0.nightly-2026-12-01-000000",
};
let asked = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    asked += 1;
    if (req.url !== "/api/v1/releasestream/4.19.0-0.nightly/latest") return void res.writeHead(404).end();
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ ...latest, phase: "Accepted" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());

const config: PeriodicsConfig = periodicsConfigSchema.parse({
  periodics: [
    {
      name: "nightly-stress",
      stream: "4.19.0-0.nightly",
      arches: ["amd64", "arm64"],
      cron: "0 */4 * * *",
      iterations: 10,
    },
  ],
});

describe("release periodics", () => {
  it("fire once per schedule however many replicas run, stress each new payload once per arch, and survive a restart", async () => {
    const env = await runMachinery(() => async (run) => run);
    const replica = () =>
      startPeriodics({
        connection: env.redis,
        prefix: env.prefix,
        config,
        runs: env.runs,
        releaseController: createReleaseController({ baseUrl: url }),
        log: env.runs.log,
        everyMs: 150,
      });
    const runsOf = async (pullSpec: string) =>
      (
        await Promise.all(
          (["amd64", "arm64"] as const).map((arch) =>
            env.runs.store.get(
              periodicRunRecord({
                periodic: config.periodics[0]!,
                arch,
                release: { ...latest, pullSpec },
                now: new Date(),
              }).id,
            ),
          ),
        )
      ).filter((run) => run !== undefined);
    const started = Date.now();
    let replicas = [await replica(), await replica()];
    const fireQueue = new Queue(PERIODIC_QUEUE, { connection: env.redis, prefix: env.prefix });
    try {
      const first = latest.pullSpec;
      await eventually(async () => (await runsOf(first)).length === 2);
      const fires = asked;
      await eventually(() => asked >= fires + 3);
      // Two replicas, one fire per tick: the scheduler's jobs, not one per replica.
      const ticks = Math.ceil((Date.now() - started) / 150);
      const fired = await fireQueue.getJobCountByTypes("completed", "active", "failed");
      expect(fired).toBeGreaterThanOrEqual(3);
      expect(fired).toBeLessThanOrEqual(ticks + 2);
      // Many fires: still one run per arch, queued for resolution once each.
      expect((await env.runs.store.listActive()).filter((r) => r.subject.kind === "periodic")).toHaveLength(
        2,
      );
      expect(await env.runs.queues.resolve.getJobCounts("waiting")).toMatchObject({ waiting: 2 });

      // A restart: the schedule goes on from Redis, the stressed payload is not stressed again.
      await Promise.all(replicas.map((r) => r.close()));
      replicas = [await replica()];
      latest = {
        name: "4.19.0-0.nightly-2026-12-01-060000",
        pullSpec: "registry.ci.openshift.org/ocp/release:4.19.0-0.nightly-2026-12-01-060000",
      };
      await eventually(async () => (await runsOf(latest.pullSpec)).length === 2);
      const [run] = await runsOf(latest.pullSpec);
      expect(run).toMatchObject({
        subject: {
          kind: "periodic",
          periodic: "nightly-stress",
          release: latest.name,
          payload: latest.pullSpec,
        },
        options: { iterations: 10, baseline: "history" },
        source: { releaseStream: "4.19.0-0.nightly" },
      });
      expect((await env.runs.store.listActive()).filter((r) => r.subject.kind === "periodic")).toHaveLength(
        4,
      );
      expect(await env.runs.queues.resolve.getJobCounts("waiting")).toMatchObject({ waiting: 4 });
    } finally {
      await fireQueue.close();
      await Promise.all(replicas.map((r) => r.close()));
      await env.close();
    }
  }, 30_000);

  it("follow edits of the configuration file: schedulers added, updated and removed; a broken edit keeps the last good one, logged once", async () => {
    const env = await runMachinery(() => async (run) => run);
    const dir = await tempDir();
    const logged: { msg: string; path?: string }[] = [];
    const log = pino({ level: "info" }, { write: (line: string) => void logged.push(JSON.parse(line)) });
    const path = join(dir.path, "periodics.yaml");
    const periodic = (name: string, cron: string, stream = "4.19.0-0.nightly") =>
      `  - { name: ${name}, stream: ${stream}, arches: [amd64], cron: '${cron}' }\n`;
    // A ConfigMap's file changes by an atomic swap, not by a write into it.
    const edit = async (text: string) => {
      await writeFile(`${path}.new`, text);
      await rename(`${path}.new`, path);
    };
    const queue = new Queue(PERIODIC_QUEUE, { connection: env.redis, prefix: env.prefix });
    const schedules = async () =>
      Object.fromEntries((await queue.getJobSchedulers()).map((s) => [s.key, s.pattern]));
    await writeFile(path, `periodics:\n${periodic("nightly", "0 */4 * * *")}`);
    const periodics = await startPeriodics({
      connection: env.redis,
      prefix: env.prefix,
      config: await loadPeriodicsConfig(path),
      watch: { path, intervalMs: 25 },
      runs: env.runs,
      releaseController: createReleaseController({ baseUrl: url }),
      log,
    });
    try {
      expect(await schedules()).toEqual({ nightly: "0 */4 * * *" });
      await edit(
        `periodics:\n${periodic("nightly", "30 */6 * * *")}${periodic("ci", "0 0 * * *", "4.19.0-0.ci")}`,
      );
      await expect.poll(schedules, { timeout: 10_000 }).toEqual({ nightly: "30 */6 * * *", ci: "0 0 * * *" });
      await edit(`periodics:\n${periodic("ci", "0 0 * * *", "4.19.0-0.ci")}`);
      await expect.poll(schedules, { timeout: 10_000 }).toEqual({ ci: "0 0 * * *" });

      // Broken twice the same way, then fixed: the schedules stay, the problem is logged once.
      await edit("periodics:\n  - { name: Bad }\n");
      const ignored = () => logged.filter((l) => l.msg.includes("change ignored")).length;
      await expect.poll(ignored, { timeout: 10_000 }).toBe(1);
      await edit("periodics:\n  - { name: Bad }\n\n");
      const reloads = logged.length;
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(ignored()).toBe(1);
      expect(logged.length).toBe(reloads);
      expect(await schedules()).toEqual({ ci: "0 0 * * *" });
      expect(logged.find((l) => l.msg.includes("change ignored"))).toMatchObject({ path });
      await edit(`periodics:\n${periodic("nightly", "0 */4 * * *")}`);
      await expect.poll(schedules, { timeout: 10_000 }).toEqual({ nightly: "0 */4 * * *" });
    } finally {
      await periodics.close();
      await queue.close();
      await dir.remove();
      await env.close();
    }
  }, 40_000);

  it("pool each periodic run's payload in the stream's history, compared with what the pool held", async () => {
    const env = await runMachinery(() => async (run) => run);
    const dir = await tempDir();
    try {
      const history = createHistoryStore({ redis: env.redis, prefix: env.prefix });
      const analyze = createRunAnalyzer({ history, log: env.runs.log });
      const run = periodicRunRecord({
        periodic: config.periodics[0]!,
        arch: "amd64",
        release: latest,
        now: new Date(),
      });
      const results = join(dir.path, "results.jsonl");
      const records = armRecords({ name: "[sig-network] pods reach pods", arm: "pr", runs: 10 });
      await writeFile(results, records.map((r) => JSON.stringify(r)).join("\n") + "\n");
      const first = await analyze({ run, resultsPaths: [results], outDir: join(dir.path, "report-1") });
      // An empty pool judges nothing; the payload's own ten runs join it.
      expect(first).toMatchObject({ conclusion: "neutral", pool: { runs: 0 } });
      expect(await history.read({ stream: "4.19.0-0.nightly", arch: "amd64" })).toMatchObject({
        runs: 1,
        tests: [{ name: "[sig-network] pods reach pods", runs: 10, passes: 10 }],
      });
      const next = periodicRunRecord({
        periodic: config.periodics[0]!,
        arch: "amd64",
        release: { name: "next", pullSpec: "quay.io/ocp/release@sha256:" + "3".repeat(64) },
        now: new Date(),
      });
      const second = await analyze({
        run: next,
        resultsPaths: [results],
        outDir: join(dir.path, "report-2"),
      });
      expect(second.pool).toMatchObject({ runs: 1 });
      expect((await history.read({ stream: "4.19.0-0.nightly", arch: "amd64" })).runs).toBe(2);
      // Each payload is an entry of the stream's history, named by its release.
      const payloads = await history.readPayloadHistory({ stream: "4.19.0-0.nightly", arch: "amd64" });
      expect(payloads.map((p) => [p.release, p.payload, p.runs])).toEqual([
        [latest.name, latest.pullSpec, 1],
        ["next", "quay.io/ocp/release@sha256:" + "3".repeat(64), 1],
      ]);
      expect(payloads[0]!.tests).toEqual({
        "[sig-network] pods reach pods": { executions: 10, failures: 0, flakes: 0 },
      });
    } finally {
      await dir.remove();
      await env.close();
    }
  });

  it("refuse a configuration file that cannot be used, naming the variable, the file and each problem", async () => {
    const dir = await tempDir();
    try {
      const path = join(dir.path, "periodics.yaml");
      await writeFile(
        path,
        "periodics:\n  - name: Nightly\n    stream: s\n    arches: [sparc]\n    cron: '0 * * * *'\n",
      );
      const error = (await loadPeriodicsConfig(path).then(
        () => undefined,
        (e: unknown) => e,
      )) as Error;
      expect(error).toBeInstanceOf(SettingsError);
      expect(error.message).toContain(`NETSTRESS_PERIODICS_CONFIG ${path} is not a periodics configuration`);
      expect(error.message).toContain("periodics.0.name: lower-case letters");
      expect(error.message).toContain("periodics.0.arches.0");
      await expect(loadPeriodicsConfig(join(dir.path, "missing.yaml"))).rejects.toThrow(/cannot be read/);
    } finally {
      await dir.remove();
    }
  });

  it("refuse a configuration with a bad cron or a duplicated name, naming the path", () => {
    const bad = periodicsConfigSchema.safeParse({
      periodics: [
        { name: "a", stream: "s", arches: ["amd64"], cron: "every day" },
        { name: "a", stream: "s", arches: ["amd64"], cron: "0 * * * *" },
      ],
    });
    expect(bad.success).toBe(false);
    const messages = bad.error!.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("\n");
    expect(messages).toContain("periodics.0.cron: a cron pattern of 5 or 6 fields");
    expect(messages).toContain("each periodic name at most once");
  });
});
