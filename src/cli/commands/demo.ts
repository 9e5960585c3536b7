import { join, resolve } from "node:path";
import type { Command } from "commander";
import { hostArch } from "../../arch/arch.ts";
import { parseCount } from "../parse-options.ts";
import { printAnalysis } from "../print-analysis.ts";
import { executionPlanFromPayload, resolvePlanFromFlags, type PayloadFlags } from "./plan.ts";

interface DemoFlags {
  out: string;
  iterations: string;
  parallel: string;
}

export function registerDemoCommand(program: Command): void {
  program
    .command("demo")
    .description(
      "The whole pipeline on one machine: a sample multi-arch payload, a PR override, a two-arm stress run, the analysis",
    )
    .option("--out <DIR>", "where the demo writes the payload, results and reports", "out/demo")
    .option("--iterations <N>", "iterations per arm", "10")
    .option("--parallel <P>", "tests at once", "8")
    .action(async (flags: DemoFlags) => {
      process.exitCode = await demo(flags);
    });
}

async function demo(flags: DemoFlags): Promise<number> {
  // Loaded on use, so that other commands (and the test processes `run` forks) carry none of it.
  const [{ buildSamplePayload }, { formatPlanTable }, { executeRun }] = await Promise.all([
    import("../../../examples/payload/build-sample-payload.ts"),
    import("../../payload/format-plan-table.ts"),
    import("../../runner/execute-run.ts"),
  ]);
  const outDir = resolve(flags.out);
  const arch = hostArch();
  const say = (text: string) => process.stderr.write(`\n== ${text}\n`);

  say("1/4 building a sample release payload (OCI layout, amd64 + arm64) and a PR build of ovn-kubernetes");
  const sample = await buildSamplePayload({ outDir: join(outDir, "payload") });
  const payloadFlags: PayloadFlags = {
    payload: sample.payload,
    arch,
    override: [`${sample.override.tag}=${sample.override.image}`],
    cacheDir: join(outDir, "cache"),
  };

  say(`2/4 resolving which test binary runs for ${arch}: the PR's (override) or the released one`);
  const { plan } = await resolvePlanFromFlags(payloadFlags, { env: {} });
  process.stdout.write(formatPlanTable(plan));

  say("3/4 stress run: PR arm and released baseline arm, interleaved");
  const runDir = join(outDir, "run");
  const { outcome, paths } = await executeRun({
    plan: await executionPlanFromPayload({ ...payloadFlags, baseline: true }),
    outDir: runDir,
    iterations: parseCount("--iterations", flags.iterations),
    parallel: parseCount("--parallel", flags.parallel, { max: 256 }),
    seed: "demo",
    timeoutMs: 60_000,
    retries: 1,
    // Fixed sample outcomes, so every demo tells the same story; set SAMPLE_EXT_SEED to vary it.
    env: { ...process.env, SAMPLE_EXT_SEED: process.env.SAMPLE_EXT_SEED ?? "demo" },
    progressStream: process.stderr,
  });
  process.stdout.write(
    `${outcome.records} executions recorded (${outcome.done}/${outcome.total} tests)\n` +
      `results:   ${paths.results}\n`,
  );

  say("4/4 comparing the arms");
  const { analyzeRun } = await import("../../report/analyze-run.ts");
  const result = await analyzeRun({ pr: [paths.results], outDir: runDir });
  printAnalysis(result);
  process.stdout.write(`\nOpen the report: ${result.paths.html}\n`);
  // The demo's sample PR carries a regression on purpose: finding it is success for the demo.
  return 0;
}
