import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSpawner } from "../helpers/build-spawner.ts";
import { NETSTRESS_BIN, runNetstress, type NetstressResult } from "../helpers/run-netstress.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const GINKGO_EXT = join(ROOT, "packages", "testbed", "src", "ginkgo-ext", "ginkgo-tests-ext.mjs");

interface Record {
  name: string;
  result: string;
  harnessError?: string;
  output: string;
}

let dir: { path: string; remove: () => Promise<void> };

/** `netstress run` of the sample's tests whose name contains `focus`, once each. */
const runArgs = (focus: string, out: string, ...more: string[]) => [
  "run",
  "--binary",
  `ginkgo-ext=${GINKGO_EXT}`,
  "--focus",
  focus,
  "--iterations",
  "1",
  ...more,
  "--out",
  out,
];

/**
 * `netstress` with its output going to files, as under CI or nohup: a pipe would hold the event loop
 * open by itself and hide an exit that nothing else keeps from happening.
 */
async function runNetstressToFiles(args: string[], env: NodeJS.ProcessEnv): Promise<NetstressResult> {
  const stdoutPath = join(dir.path, "netstress.stdout");
  const stderrPath = join(dir.path, "netstress.stderr");
  const fds = [openSync(stdoutPath, "w"), openSync(stderrPath, "w")] as const;
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, [NETSTRESS_BIN, ...args], { stdio: ["ignore", ...fds], env });
    child.on("error", reject);
    child.on("close", resolve);
  });
  fds.forEach((fd) => closeSync(fd));
  return { code, stdout: await readFile(stdoutPath, "utf8"), stderr: await readFile(stderrPath, "utf8") };
}

// The image's path: tests start from the native process spawner, built where the runner looks.
beforeAll(async () => {
  await buildSpawner();
  dir = await tempDir();
}, 60_000);
afterAll(() => dir.remove());

const records = async (outDir: string): Promise<Record[]> =>
  (await readFile(join(outDir, "results.jsonl"), "utf8"))
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record);

describe("netstress run of a Ginkgo-built extension whose tests outlive --timeout (native spawner)", () => {
  it("exits with every record written and run.json concluded", async () => {
    const out = join(dir.path, "timeouts");
    const run = await runNetstressToFiles(
      runArgs(
        "ginkgo-ext endpoints",
        out,
        ...["--retries", "0", "--parallel", "4", "--timeout", "2s"],
        // An order whose last test hangs: once the others are done, only its end is left to wait for.
        ...["--seed", "timeouts-1"],
      ),
      { ...process.env, GINKGO_EXT_CLEANUP_MS: "1000", NETSTRESS_BINARY_ENV: "GINKGO_EXT_CLEANUP_MS" },
    );
    expect(run.stderr).not.toContain("start with Node's spawn");
    expect({ code: run.code, tail: run.stderr.slice(-300) }).toMatchObject({ code: 1 });
    expect(await records(out)).toHaveLength(100);
    const manifest = JSON.parse(await readFile(join(out, "run.json"), "utf8")) as { status: string };
    expect(manifest.status).toBe("completed");
  }, 180_000);
});

describe("netstress run of a Ginkgo-built extension cancelled with SIGINT", () => {
  it("records no failure for the tests it interrupted, which report 'Interrupted by User', and lets their cleanups run", async () => {
    const cancelled = join(dir.path, "cancelled");
    const result = await runNetstress(
      runArgs(
        "ginkgo-ext endpoints",
        cancelled,
        ...["--parallel", "4", "--timeout", "10m"],
        // An order that starts with a test that only an interrupt ends.
        ...["--seed", "cancel-18"],
      ),
      {
        env: { ...process.env, GINKGO_EXT_CLEANUP_MS: "300", NETSTRESS_BINARY_ENV: "GINKGO_EXT_CLEANUP_MS" },
        onSpawn: (child) => {
          const poll = setInterval(async () => {
            const written = await readFile(join(cancelled, "results.jsonl"), "utf8").catch(() => "");
            if (written.split("\n").length > 3) {
              clearInterval(poll);
              child.kill("SIGINT");
            }
          }, 100);
        },
      },
    );
    expect(result.code).toBe(2);
    const manifest = JSON.parse(await readFile(join(cancelled, "run.json"), "utf8")) as { status: string };
    expect(manifest.status).toBe("cancelled");
    const kept = await records(cancelled);
    expect(kept.length).toBeGreaterThanOrEqual(3);
    expect(kept.filter((r) => r.result === "failed")).toEqual([]);
    // The interrupted test cleaned up: its namespace deletion wrote its mark.
    const artifacts = await readdir(join(cancelled, "artifacts", "pr", "ginkgo-ext"));
    expect(artifacts.some((name) => name.startsWith("cleanup-"))).toBe(true);
  }, 120_000);
});

describe("netstress run with a relative --out", () => {
  it("gives the binaries an absolute EXTENSION_ARTIFACT_DIR, so a test that changes directory still writes there", async () => {
    const result = await runNetstress(runArgs("network policy is enforced", "relative-out"), {
      cwd: dir.path,
    });
    expect(result.code).toBe(0);
    const artifacts = await readdir(join(dir.path, "relative-out", "artifacts", "pr", "ginkgo-ext"));
    expect(artifacts).toContain("network-policy.yaml");
  }, 60_000);
});
