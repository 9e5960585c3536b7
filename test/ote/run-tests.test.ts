import { writeFile, chmod } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getInfo } from "../../src/ote/get-info.ts";
import { listTests } from "../../src/ote/list-tests.ts";
import { OteError } from "../../src/ote/ote-error.ts";
import { NO_RESULT_ERROR, runTests } from "../../src/ote/run-tests.ts";
import { ADVERSARIAL, writeAdversarialBinary } from "../helpers/adversarial-binary.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let dir: { path: string; remove: () => Promise<void> };
let binary: string;

beforeAll(async () => {
  dir = await tempDir();
  binary = await writeAdversarialBinary(dir.path, { floodMiB: 8 });
});
afterAll(() => dir.remove());

const env = { ...process.env, SAMPLE_EXT_SEED: "fixed", SAMPLE_EXT_TIME_SCALE: "1" };
const run = (names: string[], timeoutMs = 10_000) => runTests({ binary, names, timeoutMs, env });

describe("runTests against a real OTE binary", () => {
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
      binary,
      args: ["run-test", "-n", ADVERSARIAL.flood, "-o", "jsonl"],
      timeoutMs: 20_000,
      env,
      maxNoiseBytes: 1024 * 1024,
    });
    const keptBytes = outcome.lines.reduce((sum, line) => sum + line.length, 0);
    expect(keptBytes).toBeLessThanOrEqual(1024 * 1024 + 4096);
    expect(outcome.droppedBytes).toBeGreaterThan(6 * 1024 * 1024);
    const { outcomes } = await runTests({ binary, names: [ADVERSARIAL.flood], timeoutMs: 20_000, env });
    expect(outcomes[0]).toMatchObject({ result: "passed" });
    expect(outcomes[0]?.harnessError).toBeUndefined();
  });

  it("kills a binary that writes more than the output limit", async () => {
    const { outcomes } = await runTests({
      binary,
      names: [ADVERSARIAL.flood],
      timeoutMs: 20_000,
      env,
      invoke: (options) =>
        import("../../src/ote/invoke-binary.ts").then((m) =>
          m.invokeBinary({ ...options, maxTotalBytes: 1024 * 1024 }),
        ),
    });
    expect(outcomes[0]).toMatchObject({ result: "failed", harnessError: "output-limit" });
  });

  it("runs the binary with stdin closed, so a binary waiting for names on stdin ends", async () => {
    const script = join(dir.path, "reads-stdin");
    await writeFile(script, "#!/bin/sh\ncat >/dev/null\necho waited-for-eof\n");
    await chmod(script, 0o755);
    const [outcome] = (await runTests({ binary: script, names: ["x"], timeoutMs: 5_000 })).outcomes;
    expect(outcome?.harnessError).toBe("no-result");
    expect(outcome?.output).toContain("waited-for-eof");
  });

  it("reports a binary that cannot be started", async () => {
    const [outcome] = (await runTests({ binary: join(dir.path, "missing"), names: ["x"], timeoutMs: 5_000 }))
      .outcomes;
    expect(outcome?.harnessError).toBe("crashed");
    expect(outcome?.error).toMatch(/could not be started \(ENOENT\)/);
  });

  it("returns cancelled invocations as aborted", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const result = await runTests({
      binary,
      names: [ADVERSARIAL.hang],
      timeoutMs: 30_000,
      env,
      signal: controller.signal,
    });
    expect(result.aborted).toBe(true);
  });
});

describe("listTests and getInfo", () => {
  it("lists every test with its lifecycle", async () => {
    const specs = await listTests({ binary });
    expect(specs.map((s) => s.name)).toContain(ADVERSARIAL.hang);
    expect(specs.find((s) => s.name === ADVERSARIAL.informing)?.lifecycle).toBe("informing");
  });

  it("reads the multi-line info document", async () => {
    const info = await getInfo({ binary });
    expect(info.component.name).toBe("adversarial");
    expect(info.source.commit).toBe("0".repeat(40));
  });

  it("refuses a binary that lists nothing, saying so", async () => {
    const script = join(dir.path, "lists-nothing");
    await writeFile(script, "#!/bin/sh\necho 'no tests here'\n");
    await chmod(script, 0o755);
    await expect(listTests({ binary: script })).rejects.toThrow(OteError);
    await expect(listTests({ binary: script })).rejects.toThrow(/listed no tests/);
  });

  it("says how listing failed when the binary exits non-zero", async () => {
    const script = join(dir.path, "list-fails");
    await writeFile(script, "#!/bin/sh\necho 'flag provided but not defined: -o' >&2\nexit 3\n");
    await chmod(script, 0o755);
    await expect(listTests({ binary: script })).rejects.toThrow(
      /exited with code 3: flag provided but not defined/,
    );
  });
});
