// `node --import tsx bench/ext/lab-iteration.bench.ts [build=released]` (root): one iteration of every
// network test through `netstress run` on a 2-node lab, as the runner runs it — the twelve
// [Invariant] tests started first, each in its own process with its own probe pods, spanning the
// disruptive tests — and each result's verdict and disrupted seconds.
import { spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PROBE_IMAGE, startLab } from "@netstress/testbed/lab/start-lab.ts";
import type { AgentBuild } from "@netstress/testbed/lab/run-node-agent.ts";

const build = (process.argv[2] ?? "released") as AgentBuild;
const CLI = fileURLToPath(new URL("../../bin/netstress.js", import.meta.url));
const dir = await mkdtemp(join(tmpdir(), "netstress-bench-ext-"));
const lab = await startLab({ name: "benchiter", nodes: 2, build, handleSignals: false });
try {
  const binary = join(dir, "netstress-network-tests-ext");
  await writeFile(binary, `#!/bin/sh\nexec "${process.execPath}" "${CLI}" ext "$@"\n`);
  await chmod(binary, 0o755);
  const started = Date.now();
  const code = await new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        CLI,
        "run",
        `--binary=netstress-network-tests=${binary}`,
        `--pr-cluster=${lab.kubeconfigPath}`,
        "--include-disruptive",
        "--iterations=1",
        "--retries=0",
        `--out=${join(dir, "out")}`,
      ],
      {
        stdio: ["ignore", "ignore", "inherit"],
        env: {
          ...process.env,
          NETSTRESS_PROBE_IMAGE: PROBE_IMAGE,
          NETSTRESS_DISRUPTION_SETTLE_SECONDS: "5",
          NETSTRESS_BINARY_ENV: "NETSTRESS_DISRUPTION_SETTLE_SECONDS",
        },
      },
    );
    child.on("close", resolve);
  });
  console.log(`${build} lab: netstress run exit ${code}, ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const records = (await readFile(join(dir, "out", "results.jsonl"), "utf8"))
    .trim()
    .split("\n")
    .map(
      (l) =>
        JSON.parse(l) as {
          name: string;
          result: string;
          disruption?: {
            path: string;
            connection: string;
            observedSeconds: number;
            disruptedSeconds: number;
          }[];
        },
    );
  for (const r of records) {
    const disrupted = (r.disruption ?? []).filter((d) => d.disruptedSeconds > 0);
    const observed = Math.max(0, ...(r.disruption ?? []).map((d) => d.observedSeconds));
    console.log(
      `${r.result.padEnd(7)} ${r.name}  observed ${observed.toFixed(0)} s` +
        (disrupted.length
          ? `; disrupted: ${disrupted.map((d) => `${d.path}/${d.connection} ${d.disruptedSeconds} s`).join(", ")}`
          : ""),
    );
  }
} finally {
  await lab.stop();
  await rm(dir, { recursive: true, force: true });
}
