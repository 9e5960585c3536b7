import { join, resolve } from "node:path";
import { importTestbed } from "../import-testbed.ts";
import type { Command } from "commander";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { MAX_CLUSTERS_PER_ARM } from "../../config/cluster-count.ts";
import { parseCount, parseRateChange } from "../parse-options.ts";
import { printAnalysis } from "../print-analysis.ts";
import { executionPlanFromPayload, resolvePlanFromFlags, type PayloadFlags } from "./plan.ts";

interface DemoFlags {
  out: string;
  target: string;
  budget: string;
  parallel: string;
  keepClusters?: boolean;
}

export function registerDemoCommand(program: Command): void {
  program
    .command("demo")
    .description(
      "The whole pipeline on one machine: a sample multi-arch payload and its PR payload, clusters from a simulated Hive, an adaptive two-arm stress run on them (crossover by upgrade) until every test is decided, the analysis",
    )
    .option("--out <DIR>", "where the demo writes the payload, results and reports", "out/demo")
    .option(
      "--target <P0:P1>",
      "the rise in a test's failure probability the adaptive run decides on, e.g. 0.02:0.52",
      "0.02:0.52",
    )
    .option(
      "--budget <N>",
      "what the run may spend: the test executions of a fixed run of N iterations per arm, clusters and upgrades included",
      "200",
    )
    .option("--parallel <P>", "tests at once", "8")
    .option("--keep-clusters", "keep every cluster (for kubectl) after the report, until Ctrl-C")
    .action(async (flags: DemoFlags) => {
      process.exitCode = await demo(flags);
    });
}

/**
 * What the demo's design can see and what its target needs, as a bot's check run says it: an
 * adaptive run whose batches run a crossover by upgrade (its arms' payloads differ), its budget
 * spent as a fixed crossover of its first batch's clusters (`clustersPerArm`), each running as many
 * iterations per arm as the budget pays for once its install and upgrade are paid (at the
 * planner's prices).
 */
async function demoPowerLine(
  target: { from: number; to: number },
  budgetIterations: number,
  clustersPerArm: number,
): Promise<string> {
  const [{ runDesignPower }, { DEFAULT_DESIGN_COSTS }, { ASSUMED_TESTS }, { powerLine }] = await Promise.all([
    import("../../analysis/run-design-power.ts"),
    import("../../analysis/power-types.ts"),
    import("../../queue/run-power-design.ts"),
    import("../../runs/power-line.ts"),
  ]);
  const { installMinutes, iterationMinutes, upgradeMinutes = 0 } = DEFAULT_DESIGN_COSTS;
  const paid = 2 * budgetIterations - (clustersPerArm * (installMinutes + upgradeMinutes)) / iterationMinutes;
  const power = runDesignPower({
    design: {
      kind: "adaptive",
      batchesOn: "crossover",
      clustersPerArm,
      iterationsPerCluster: Math.max(1, Math.floor(paid / (2 * clustersPerArm))),
      tests: ASSUMED_TESTS,
      testsAssumed: true,
      budgetIterations,
    },
    target,
    maxClustersPerArm: MAX_CLUSTERS_PER_ARM,
  });
  return powerLine(power);
}

async function demo(flags: DemoFlags): Promise<number> {
  // Loaded on use, so that other commands (and the test processes `run` forks) carry none of it.
  const [
    { buildSamplePayload },
    { formatPlanTable },
    { startDemoClusters },
    { runDemoAdaptive },
    { formatAdaptiveSummary },
    { firstCrossoverBatch },
  ] = await importTestbed("demo", () =>
    Promise.all([
      import("@netstress/testbed/sample-payload/build-sample-payload.ts"),
      import("../../payload/format-plan-table.ts"),
      import("../demo-clusters.ts"),
      import("../demo-adaptive-run.ts"),
      import("../format-adaptive-summary.ts"),
      import("../first-crossover-batch.ts"),
    ]),
  );
  const target = parseRateChange("--target", flags.target);
  const budgetIterations = parseCount("--budget", flags.budget, { max: 10_000 });
  // The most clusters a batch claims: the first's. Before anything starts: a budget too small says so.
  const firstBatch = firstCrossoverBatch(target, budgetIterations);
  const outDir = resolve(flags.out);
  const arch = hostArch();
  const say = (text: string) => process.stderr.write(`\n== ${text}\n`);
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(130);
    process.stderr.write(`\n${signal}: stopping and giving every cluster back (again to quit now)\n`);
    controller.abort(new Error(`cancelled by ${signal}`));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    say(
      "1/5 building a sample release payload (OCI layout, amd64 + arm64) and its PR payload with a PR build of ovn-kubernetes",
    );
    const sample = await buildSamplePayload({ outDir: join(outDir, "payload") });
    const payloadFlags: PayloadFlags = {
      payload: sample.payload,
      arch,
      override: [`${sample.override.tag}=${sample.override.image}`],
      cacheDir: join(outDir, "cache"),
    };

    say(`2/5 resolving which test binary runs for ${arch}: the PR's (override) or the released one`);
    const { plan, registry } = await resolvePlanFromFlags(payloadFlags, { env: {} });
    process.stdout.write(formatPlanTable(plan));

    say(
      `3/5 a simulated Hive hub with a pool of ${arch} clusters of the released payload: each batch claims new ones for the baseline arm and upgrades those that ran it to the PR payload for the PR arm`,
    );
    const demoClusters = await startDemoClusters({
      registry,
      arch,
      payloads: { pr: sample.prPayload, baseline: sample.payload },
      poolSize: firstBatch.clusters.baseline.length,
      dir: join(outDir, "clusters"),
      signal: controller.signal,
      onProgress: (text) => process.stderr.write(`   ${text}\n`),
    });
    try {
      process.stdout.write(
        `hub:       kubectl --kubeconfig ${demoClusters.hubKubeconfig} get clusterdeployments,clusterclaims -A\n` +
          `baseline:  clusters claimed running ${demoClusters.payloads.baseline}\n` +
          `pr:        the same clusters, upgraded to ${demoClusters.payloads.pr}\n`,
      );

      say(
        `4/5 adaptive stress run, crossover by upgrade: batches until every test is decided at ${flags.target} or the budget of ${budgetIterations} iterations is spent`,
      );
      process.stdout.write(
        `${await demoPowerLine(target, budgetIterations, firstBatch.clusters.baseline.length)}\n`,
      );
      const runDir = join(outDir, "run");
      const adaptive = await runDemoAdaptive({
        clusters: demoClusters,
        plan: await executionPlanFromPayload({ ...payloadFlags, baseline: true }),
        target,
        budgetIterations,
        outDir: runDir,
        releaseWhenDone: !flags.keepClusters,
        run: {
          parallel: parseCount("--parallel", flags.parallel, { max: 256 }),
          seed: "demo",
          timeoutMs: 60_000,
          retries: 1,
          signal: controller.signal,
          // Fixed sample outcomes, so every demo tells the same story; set SAMPLE_EXT_SEED to vary it.
          env: {
            ...process.env,
            SAMPLE_EXT_SEED: process.env.SAMPLE_EXT_SEED ?? "demo",
            // The sample tests' durations, shortened: an adaptive run's batches run one after another.
            SAMPLE_EXT_TIME_SCALE: process.env.SAMPLE_EXT_TIME_SCALE ?? "0.2",
          },
          progressStream: process.stderr,
        },
        write: (text) => process.stdout.write(text),
      });
      if (adaptive.status === "cancelled") return 2;
      process.stdout.write(`\n${formatAdaptiveSummary(adaptive.summary)}`);

      say("5/5 every execution analyzed as one run (detail only: the decisions above are the run's verdict)");
      const { analyzeRun } = await import("../../report/analyze-run.ts");
      const result = await analyzeRun({ pr: adaptive.results, outDir: runDir, adaptive: adaptive.summary });
      printAnalysis(result);
      process.stdout.write(`\nOpen the report: ${result.paths.html}\n`);
      if (flags.keepClusters && !controller.signal.aborted) {
        process.stderr.write("\nclusters kept for kubectl (the commands above); Ctrl-C gives them back\n");
        await new Promise((done) => controller.signal.addEventListener("abort", done, { once: true }));
      }
      // The demo's sample PR carries a regression on purpose: finding it is success for the demo.
      return 0;
    } finally {
      const { released, left } = await demoClusters.giveBack();
      process.stdout.write(
        `clusters:  ${released} given back; ${left.length === 0 ? "none left on the hub" : `left on the hub: ${left.join(", ")}`}\n`,
      );
    }
  } catch (error) {
    if (controller.signal.aborted) return 2;
    throw error;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
