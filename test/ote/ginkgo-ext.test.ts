import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTests, type RunTestsOptions } from "../../src/ote/run-tests.ts";
import type { StartProcess } from "../../src/ote/start-process.ts";
import { startWithNodeSpawn } from "../../src/ote/start-with-node-spawn.ts";
import { startProcessSpawner, type ProcessSpawner } from "../../src/runner/process-spawner.ts";
import { buildSpawner } from "../helpers/build-spawner.ts";
import { tempDir } from "../helpers/temp-dir.ts";

/** Upstream-built behaviour, through packages/testbed/src/ginkgo-ext (see its README for the specs). */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const GINKGO_EXT = join(ROOT, "packages", "testbed", "src", "ginkgo-ext", "ginkgo-tests-ext.mjs");
const spec = (name: string) => `[sig-network] ginkgo-ext ${name}`;
const HANG = spec("endpoints wait for a backend that never starts 1 [Suite:openshift/conformance/parallel]");
const STUCK_CLEANUP = spec("cleanup never finishes after an interrupt");
const VERBOSE = spec("logs verbosely and passes");

let dir: { path: string; remove: () => Promise<void> };
let spawner: ProcessSpawner;

beforeAll(async () => {
  dir = await tempDir();
  spawner = await startProcessSpawner({
    executable: await buildSpawner(join(dir.path, "netstress-spawner")),
  });
}, 60_000);
afterAll(async () => {
  await spawner.close();
  await dir.remove();
});

describe.each([
  ["the native process spawner", () => spawner.start],
  ["Node's spawn", () => startWithNodeSpawn],
] as const)("a Ginkgo-built extension started by %s", (label, start: () => StartProcess) => {
  const run = (name: string, options: Partial<RunTestsOptions> & { env?: NodeJS.ProcessEnv }) =>
    runTests({
      binary: GINKGO_EXT,
      names: [name],
      timeoutMs: 10_000,
      start: start(),
      ...options,
      env: { ...process.env, ...options.env },
    });

  it("reads a passing result from a 9.5 MiB line, keeping the head and tail of its output", async () => {
    const { outcomes } = await run(VERBOSE, { timeoutMs: 30_000 });
    expect(outcomes[0]).toMatchObject({ result: "passed" });
    expect(outcomes[0]?.harnessError).toBeUndefined();
    expect(outcomes[0]?.output).toMatch(/^ {2}STEP: logging every request/);
    expect(outcomes[0]?.output).toMatch(/characters truncated/);
    expect(outcomes[0]?.output.length).toBeLessThan(70 * 1024);
  }, 40_000);

  // Deadlines leave a loaded machine time to start Node and the binary's signal handlers, which a
  // Go binary has from its first instant.
  it("is a timeout when it outlives its deadline, though it reports itself failed 'Interrupted by User'", async () => {
    const { outcomes } = await run(HANG, { timeoutMs: 4_000, env: { GINKGO_EXT_CLEANUP_MS: "100" } });
    const [outcome] = outcomes;
    expect(outcome).toMatchObject({ result: "failed", harnessError: "timeout" });
    expect(outcome?.error).toMatch(/timed out after 4s and was interrupted/);
    expect(outcome?.error).toContain("Interrupted by User");
    // The binary's own account, its progress report, is kept.
    expect(outcome?.output).toContain("Here's a current progress report");
  }, 20_000);

  it("interrupts with SIGINT and lets cleanups outlast the old 3 s kill, within the grace", async () => {
    const artifacts = join(dir.path, `artifacts-${label.replace(/\W+/g, "-")}`);
    const { outcomes } = await run(HANG, {
      timeoutMs: 4_000,
      interruptGraceMs: 8_000,
      env: { GINKGO_EXT_CLEANUP_MS: "3500", EXTENSION_ARTIFACT_DIR: artifacts },
    });
    expect(outcomes[0]).toMatchObject({ result: "failed", harnessError: "timeout" });
    // The namespace deletion finished: nothing killed the binary in the middle of it.
    expect(await readdir(artifacts)).toEqual([expect.stringMatching(/^cleanup-/)]);
    expect(outcomes[0]?.output).toContain("Destroying namespace");
  }, 20_000);

  it("sends SIGABRT after the grace when cleanups never end, keeping the goroutine dump", async () => {
    const started = Date.now();
    const { outcomes } = await run(STUCK_CLEANUP, { timeoutMs: 4_000, interruptGraceMs: 1_500 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(5_500);
    expect(outcomes[0]).toMatchObject({ result: "failed", harnessError: "timeout" });
    expect(outcomes[0]?.error).toContain("exited with code 2");
    expect(outcomes[0]?.output).toContain("SIGABRT: abort");
    expect(outcomes[0]?.output).toContain("goroutine");
  }, 20_000);
});
