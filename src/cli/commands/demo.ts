import { join, resolve } from "node:path";
import type { Command } from "commander";
import { hostArch } from "../../arch/arch.ts";
import { MAX_CLUSTERS_PER_ARM } from "../../config/cluster-count.ts";
import { DEFAULT_TARGET, parseTarget } from "../../config/parse-target.ts";
import { parseCount } from "../parse-options.ts";
import { printAnalysis } from "../print-analysis.ts";
import { executionPlanFromPayload, resolvePlanFromFlags, type PayloadFlags } from "./plan.ts";

interface DemoFlags {
  out: string;
  iterations: string;
  parallel: string;
  clusters: string;
  keepClusters?: boolean;
}

export function registerDemoCommand(program: Command): void {
  program
    .command("demo")
    .description(
      "The whole pipeline on one machine: a sample multi-arch payload and its PR payload, clusters of each from a simulated Hive, a two-arm stress run on them, the analysis",
    )
    .option("--out <DIR>", "where the demo writes the payload, results and reports", "out/demo")
    .option("--iterations <N>", "iterations per arm", "10")
    .option("--parallel <P>", "tests at once", "8")
    .option("--clusters <N>", "clusters under test per arm", "2")
    .option("--keep-clusters", "after the report, keep the clusters (for kubectl) until Ctrl-C")
    .action(async (flags: DemoFlags) => {
      process.exitCode = await demo(flags);
    });
}

/**
 * What the demo's design can see and what 2% → 10% needs, as a bot's check run says it: separate
 * clusters per arm, the iterations spread over them, the planner's assumed suite size.
 */
async function demoPowerLine(clustersPerArm: number, iterations: number): Promise<string> {
  const [{ runDesignPower }, { ASSUMED_TESTS }, { powerLine }] = await Promise.all([
    import("../../analysis/run-design-power.ts"),
    import("../../queue/run-power-design.ts"),
    import("../../runs/power-line.ts"),
  ]);
  const design = {
    kind: "separate" as const,
    clustersPerArm,
    iterationsPerCluster: Math.max(1, Math.floor(iterations / clustersPerArm)),
    tests: ASSUMED_TESTS,
    testsAssumed: true,
  };
  const power = runDesignPower({
    design,
    target: parseTarget(DEFAULT_TARGET),
    maxClustersPerArm: MAX_CLUSTERS_PER_ARM,
  });
  return powerLine(power);
}

async function demo(flags: DemoFlags): Promise<number> {
  // Loaded on use, so that other commands (and the test processes `run` forks) carry none of it.
  const [{ buildSamplePayload }, { formatPlanTable }, { executeRun }, { startDemoClusters }] =
    await Promise.all([
      import("../../../examples/payload/build-sample-payload.ts"),
      import("../../payload/format-plan-table.ts"),
      import("../../runner/execute-run.ts"),
      import("../demo-clusters.ts"),
    ]);
  const outDir = resolve(flags.out);
  const arch = hostArch();
  const perArm = parseCount("--clusters", flags.clusters, { max: 8 });
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
      `3/5 ${perArm} ${arch} clusters per arm from a simulated Hive: claimed from a pool of the released payload, installed from the PR payload`,
    );
    const demoClusters = await startDemoClusters({
      registry,
      arch,
      payloads: { pr: sample.prPayload, baseline: sample.payload },
      perArm,
      dir: join(outDir, "clusters"),
      signal: controller.signal,
      onProgress: (text) => process.stderr.write(`   ${text}\n`),
    });
    try {
      process.stdout.write(
        `hub:       kubectl --kubeconfig ${demoClusters.hubKubeconfig} get clusterdeployments,clusterclaims -A\n` +
          demoClusters.clusters
            .map(
              (c) =>
                `${c.arm.padEnd(9)}  ${c.id}  running ${c.payload}\n           kubectl --kubeconfig ${c.kubeconfig} get clusterversion\n`,
            )
            .join(""),
      );

      say("4/5 stress run: PR arm and released baseline arm, interleaved, each on its own clusters");
      const iterations = parseCount("--iterations", flags.iterations);
      process.stdout.write(`${await demoPowerLine(perArm, iterations)}\n`);
      const runDir = join(outDir, "run");
      const { outcome, paths } = await executeRun({
        plan: {
          ...(await executionPlanFromPayload({ ...payloadFlags, baseline: true })),
          clusters: demoClusters.clusters,
        },
        outDir: runDir,
        iterations,
        parallel: parseCount("--parallel", flags.parallel, { max: 256 }),
        seed: "demo",
        timeoutMs: 60_000,
        retries: 1,
        signal: controller.signal,
        // Fixed sample outcomes, so every demo tells the same story; set SAMPLE_EXT_SEED to vary it.
        env: { ...process.env, SAMPLE_EXT_SEED: process.env.SAMPLE_EXT_SEED ?? "demo" },
        progressStream: process.stderr,
      });
      process.stdout.write(
        `${outcome.records} executions recorded (${outcome.done}/${outcome.total} tests)\n` +
          `results:   ${paths.results}\n`,
      );
      if (outcome.status === "cancelled") return 2;

      say("5/5 comparing the arms");
      const { analyzeRun } = await import("../../report/analyze-run.ts");
      const result = await analyzeRun({ pr: [paths.results], outDir: runDir });
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
