// `node --import tsx bench/ext/lab-disruption.bench.ts [restarts] [labsPerArm] [iterations]` (root):
// 1. the node agent restart test `restarts` times on a PR-build lab and on a released-build lab
//    (how often each fails: the PR build should fail every time, the released one never);
// 2. a two-arm `netstress run` of that test, PR labs against released labs (`labsPerArm` each,
//    `iterations` per arm), and what the analysis concludes.
import { spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DISRUPTIVE_SUITE, networkTests } from "@netstress/network-extension/network-tests.ts";
import { PROBE_IMAGE, startLab, type Lab } from "@netstress/testbed/lab/start-lab.ts";

const [restarts = 10, labsPerArm = 3, iterations = 6] = process.argv.slice(2).map(Number);
const CLI = fileURLToPath(new URL("../../bin/netstress.js", import.meta.url));
const TEST = networkTests().find((t) => t.kind === "agent-restart")!.name;
const ENV = {
  ...process.env,
  NETSTRESS_PROBE_IMAGE: PROBE_IMAGE,
  NETSTRESS_PROBE_INTERVAL_MS: "250",
  NETSTRESS_PROBE_TIMEOUT_MS: "800",
  NETSTRESS_DISRUPTION_SETTLE_SECONDS: "4",
  NETSTRESS_BINARY_ENV:
    "NETSTRESS_PROBE_INTERVAL_MS,NETSTRESS_PROBE_TIMEOUT_MS,NETSTRESS_DISRUPTION_SETTLE_SECONDS",
};
const run = (args: string[], env: NodeJS.ProcessEnv) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });

const dir = await mkdtemp(join(tmpdir(), "netstress-bench-ext-"));
const labs: Lab[] = [];
try {
  const [pr, released] = await Promise.all([
    startLab({ name: "benchpr0", nodes: 2, build: "pr", handleSignals: false }),
    startLab({ name: "benchrel0", nodes: 2, build: "released", handleSignals: false }),
  ]);
  labs.push(pr, released);
  for (const [build, lab] of [
    ["pr", pr],
    ["released", released],
  ] as const) {
    const tally = { passed: 0, failed: 0, other: 0 };
    const crossSeconds: number[] = [];
    const started = Date.now();
    for (let i = 0; i < restarts; i++) {
      const { stdout } = await run(["ext", "run-test", "-n", TEST, "-o", "jsonl"], {
        ...ENV,
        KUBECONFIG: lab.kubeconfigPath,
      });
      const result = JSON.parse(stdout.trim().split("\n").at(-1)!) as {
        result: string;
        details?: { name: string; value: { path: string; connection: string; disruptedSeconds: number }[] }[];
      };
      tally[result.result === "passed" ? "passed" : result.result === "failed" ? "failed" : "other"] += 1;
      const cross = result.details?.[0]?.value.find(
        (d) => d.path === "pod-to-pod-cross-node" && d.connection === "new",
      );
      crossSeconds.push(cross?.disruptedSeconds ?? NaN);
    }
    console.log(
      `${build} agent: ${restarts} restarts, ${tally.failed} failed, ${tally.passed} passed, ${tally.other} other; ` +
        `cross-node (new) disrupted s: ${crossSeconds.join(", ")}; ${((Date.now() - started) / 1000 / restarts).toFixed(1)} s per test`,
    );
  }
  if (labsPerArm > 0) {
    const more = await Promise.all(
      Array.from({ length: labsPerArm - 1 }, (_, i) => [
        startLab({ name: `benchpr${i + 1}`, nodes: 2, build: "pr", handleSignals: false }),
        startLab({ name: `benchrel${i + 1}`, nodes: 2, build: "released", handleSignals: false }),
      ]).flat(),
    );
    labs.push(...more);
    const binary = join(dir, "netstress-network-tests-ext");
    await writeFile(binary, `#!/bin/sh\nexec "${process.execPath}" "${CLI}" ext "$@"\n`);
    await chmod(binary, 0o755);
    const out = join(dir, "two-arm");
    const started = Date.now();
    const result = await run(
      [
        "run",
        `--binary=netstress-network-tests=${binary}`,
        `--baseline-binary=netstress-network-tests=${binary}`,
        ...labs.filter((l) => l.build === "pr").map((l) => `--pr-cluster=${l.kubeconfigPath}`),
        ...labs.filter((l) => l.build === "released").map((l) => `--baseline-cluster=${l.kubeconfigPath}`),
        `--suite=${DISRUPTIVE_SUITE}`,
        "--include-disruptive",
        "--focus=node agent restart",
        `--iterations=${iterations}`,
        "--retries=0",
        "--seed=bench",
        `--out=${out}`,
      ],
      ENV,
    );
    const records = (await readFile(join(out, "results.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { arm: string; result: string; cluster?: string; error?: string });
    const count = (arm: string, r: string) => records.filter((x) => x.arm === arm && x.result === r).length;
    console.log(
      `two-arm run, ${labsPerArm} lab(s) per arm, ${iterations} iterations: pr ${count("pr", "failed")} failed/${count("pr", "passed")} passed, ` +
        `baseline ${count("baseline", "failed")} failed/${count("baseline", "passed")} passed; exit ${result.code}; ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    for (const r of records.filter((r) => r.result !== "passed"))
      console.log(`  ${r.arm} on ${r.cluster ?? "?"}: ${r.result}: ${(r.error ?? "").slice(0, 300)}`);
    console.log(result.stdout);
  }
} finally {
  await Promise.all(labs.map((l) => l.stop()));
  await rm(dir, { recursive: true, force: true });
}
