import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NO_RESULT_ERROR, runTests } from "../../src/ote/run-tests.ts";
import type { StartProcess } from "../../src/ote/start-process.ts";
import { ADVERSARIAL } from "./adversarial-binary.ts";

/**
 * What running a test binary must do however its process is started (Node's spawn, the runner's
 * process spawner): one suite, run by each way of starting. The getters are read inside the tests,
 * after the caller's beforeAll has made the adversarial binary and the start function.
 */
export function describeRunTestsBehaviour(
  label: string,
  context: {
    dir: () => { path: string };
    binary: () => string;
    start: () => StartProcess | undefined;
  },
): void {
  const { dir, binary } = context;
  const started = (): { start?: StartProcess } => {
    const start = context.start();
    return start ? { start } : {};
  };
  const env = { ...process.env, SAMPLE_EXT_SEED: "fixed", SAMPLE_EXT_TIME_SCALE: "1" };
  const run = (names: string[], timeoutMs = 10_000) =>
    runTests({ binary: binary(), names, timeoutMs, env, ...started() });

  describe(label, () => {
    it("returns the binary's own results for tests that report", async () => {
      const { outcomes } = await run([ADVERSARIAL.passes, ADVERSARIAL.fails]);
      expect(outcomes.map((o) => o.result)).toEqual(["passed", "failed"]);
      expect(outcomes[1]?.error).toBe("always");
      expect(outcomes.every((o) => o.harnessError === undefined)).toBe(true);
    });

    it("turns a crash into a failure that says the binary crashed, with its stderr", async () => {
      const [outcome] = (await run([ADVERSARIAL.crash])).outcomes;
      expect(outcome).toMatchObject({ result: "failed", harnessError: "crashed" });
      expect(outcome?.error).toContain(NO_RESULT_ERROR);
      expect(outcome?.error).toContain("exited with code 2");
      expect(outcome?.output).toContain("nil pointer dereference");
    });

    it("kills a hanging binary's whole process group at the timeout", async () => {
      const started = Date.now();
      const [outcome] = (await run([ADVERSARIAL.hang], 800)).outcomes;
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(outcome).toMatchObject({ result: "failed", harnessError: "timeout" });
      expect(outcome?.error).toMatch(/timed out after 0\.8s/);
    });

    it("fails a test whose result line is half-written JSON, counting the malformed line", async () => {
      const [outcome] = (await run([ADVERSARIAL.garbage])).outcomes;
      expect(outcome).toMatchObject({ result: "failed", harnessError: "no-result" });
      expect(outcome?.error).toContain("1 malformed JSON line");
    });

    it("fails a test the binary never reported, with the documented message", async () => {
      const [outcome] = (await run([ADVERSARIAL.noResult])).outcomes;
      expect(outcome?.error).toContain(NO_RESULT_ERROR);
      expect(outcome?.harnessError).toBe("no-result");
    });

    it("names what was wrong with a malformed result record", async () => {
      const [outcome] = (await run([ADVERSARIAL.malformed])).outcomes;
      expect(outcome).toMatchObject({ result: "failed", harnessError: "malformed-result" });
      expect(outcome?.error).toMatch(/malformed result record: .*result/);
    });

    it("finds the result after megabytes of log noise, keeping only a bounded share of the noise", async () => {
      const { invokeBinary } = await import("../../src/ote/invoke-binary.ts");
      const outcome = await invokeBinary({
        binary: binary(),
        ...started(),
        args: ["run-test", "-n", ADVERSARIAL.flood, "-o", "jsonl"],
        timeoutMs: 20_000,
        env,
        maxNoiseBytes: 1024 * 1024,
      });
      const keptBytes = outcome.lines.reduce((sum, line) => sum + line.length, 0);
      expect(keptBytes).toBeLessThanOrEqual(1024 * 1024 + 4096);
      expect(outcome.droppedBytes).toBeGreaterThan(6 * 1024 * 1024);
      const { outcomes } = await runTests({
        binary: binary(),
        names: [ADVERSARIAL.flood],
        timeoutMs: 20_000,
        env,
        ...started(),
      });
      expect(outcomes[0]).toMatchObject({ result: "passed" });
      expect(outcomes[0]?.harnessError).toBeUndefined();
    });

    it("kills a binary that writes more than the output limit", async () => {
      const { outcomes } = await runTests({
        binary: binary(),
        names: [ADVERSARIAL.flood],
        timeoutMs: 20_000,
        env,
        ...started(),
        invoke: (options) =>
          import("../../src/ote/invoke-binary.ts").then((m) =>
            m.invokeBinary({ ...options, maxTotalBytes: 1024 * 1024 }),
          ),
      });
      expect(outcomes[0]).toMatchObject({ result: "failed", harnessError: "output-limit" });
    });

    it("runs the binary with stdin closed, so a binary waiting for names on stdin ends", async () => {
      const script = join(dir().path, "reads-stdin");
      await writeFile(script, "#!/bin/sh\ncat >/dev/null\necho waited-for-eof\n");
      await chmod(script, 0o755);
      const [outcome] = (await runTests({ binary: script, names: ["x"], timeoutMs: 5_000, ...started() }))
        .outcomes;
      expect(outcome?.harnessError).toBe("no-result");
      expect(outcome?.output).toContain("waited-for-eof");
    });

    it("reports a binary that cannot be started", async () => {
      const [outcome] = (
        await runTests({ binary: join(dir().path, "missing"), names: ["x"], timeoutMs: 5_000, ...started() })
      ).outcomes;
      expect(outcome?.harnessError).toBe("crashed");
      expect(outcome?.error).toMatch(/could not be started \(ENOENT\)/);
    });

    it("returns cancelled invocations as aborted", async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 200);
      const result = await runTests({
        binary: binary(),
        ...started(),
        names: [ADVERSARIAL.hang],
        timeoutMs: 30_000,
        env,
        signal: controller.signal,
      });
      expect(result.aborted).toBe(true);
    });
  });
}
