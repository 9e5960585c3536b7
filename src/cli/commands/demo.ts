import { join, resolve } from "node:path";
import type { Command } from "commander";
import { buildSampleBinaries } from "../../../examples/sample-ext/build-sample-binaries.ts";
import { hostArch } from "../../arch/arch.ts";
import { executeRun } from "../../runner/execute-run.ts";
import { parseCount } from "../parse-options.ts";

interface DemoFlags {
  out: string;
  iterations: string;
  parallel: string;
}

export function registerDemoCommand(program: Command): void {
  program
    .command("demo")
    .description("A real local stress run of the sample networking test binaries: PR build against released")
    .option("--out <DIR>", "where the demo writes binaries and results", "out/demo")
    .option("--iterations <N>", "iterations per arm", "10")
    .option("--parallel <P>", "tests at once", "8")
    .action(async (flags: DemoFlags) => {
      process.exitCode = await demo(flags);
    });
}

async function demo(flags: DemoFlags): Promise<number> {
  const outDir = resolve(flags.out);
  const arch = hostArch();
  // Fixed sample outcomes, so every demo shows the same story; set SAMPLE_EXT_SEED to vary it.
  const env = { ...process.env, SAMPLE_EXT_SEED: process.env.SAMPLE_EXT_SEED ?? "demo" };
  process.stderr.write(
    `building sample OTE binaries (ovn-kubernetes, sdn, and a PR build of ovn-kubernetes)…\n`,
  );
  const samples = await buildSampleBinaries({ outDir: join(outDir, "binaries"), gzip: true });

  const { outcome, paths } = await executeRun({
    plan: {
      arch,
      arms: [
        {
          arm: "pr",
          components: [
            { component: "ovn-kubernetes", binary: samples.pr["ovn-kubernetes"], source: "override" },
            { component: "sdn", binary: samples.released.sdn, source: "released" },
          ],
        },
        {
          arm: "baseline",
          components: [
            { component: "ovn-kubernetes", binary: samples.released["ovn-kubernetes"], source: "released" },
            { component: "sdn", binary: samples.released.sdn, source: "released" },
          ],
        },
      ],
    },
    outDir: join(outDir, "run"),
    iterations: parseCount("--iterations", flags.iterations),
    parallel: parseCount("--parallel", flags.parallel, { max: 256 }),
    seed: "demo",
    timeoutMs: 60_000,
    retries: 1,
    env,
    progressStream: process.stderr,
  });
  process.stdout.write(
    `\nstress run: ${outcome.records} executions of ${outcome.total} scheduled tests (PR arm and baseline arm, ${arch})\n` +
      `  results: ${paths.results}\n  junit:   ${paths.junit}\n  plan:    ${paths.manifest}\n`,
  );
  return 0;
}
