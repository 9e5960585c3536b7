import { Option, type Command } from "commander";
import { parseCount, parseRateChange } from "../parse-options.ts";
import { UsageError } from "../usage-error.ts";
import type { DesignKind } from "../../analysis/power-types.ts";

interface PlanPowerFlags {
  clusters: string;
  iterations: string;
  tests: string;
  design: DesignKind;
  installMinutes: string;
  iterationMinutes: string;
  upgradeMinutes?: string;
  detect?: string;
  seed: string;
  output: "table" | "json";
}

const percent = (value: number) => `${Math.round(value * 1000) / 10}%`;
const points = (value: number) => `+${Math.round(value * 1000) / 10} points`;

export function registerPlanPowerCommand(program: Command): void {
  program
    .command("plan-power")
    .description(
      "What a run design can see: per test class, the smallest failure-rate rise the analysis flags with 80% power, and what it costs in cluster-hours; with --detect, the cheapest design that sees a stated change",
    )
    .option("--clusters <N>", "clusters per arm (shared, crossover: clusters both arms use)", "6")
    .option("--iterations <N>", "iterations per cluster and arm", "4")
    .option("--tests <N>", "tests in the run (the family a regression is found in)", "500")
    .addOption(
      new Option(
        "--design <KIND>",
        "separate clusters per arm, shared clusters (same payload in both arms), or crossover (each cluster runs the baseline payload, is upgraded, runs the PR payload)",
      )
        .choices(["separate", "shared", "crossover"])
        .default("separate"),
    )
    .option("--install-minutes <N>", "minutes a cluster takes to install", "45")
    .option("--iteration-minutes <N>", "minutes one iteration of the suite takes", "10")
    .option(
      "--upgrade-minutes <N>",
      "minutes upgrading a cluster from the baseline to the PR payload takes (--design crossover only; default 30)",
    )
    .option(
      "--detect <P0:P1>",
      "find the cheapest design that detects this rise (e.g. 0.02:0.10) with 80% power",
    )
    .option("--seed <TEXT>", "simulation seed", "netstress-plan-power")
    .addOption(
      new Option("-o, --output <FORMAT>", "output format").choices(["table", "json"]).default("table"),
    )
    .action(async (flags: PlanPowerFlags) => {
      const design = {
        kind: flags.design,
        clustersPerArm: parseCount("--clusters", flags.clusters, { min: 2, max: 200 }),
        iterationsPerCluster: parseCount("--iterations", flags.iterations, { max: 1000 }),
        tests: parseCount("--tests", flags.tests, { max: 100_000 }),
      };
      if (flags.upgradeMinutes !== undefined && design.kind !== "crossover")
        throw new UsageError(
          `--upgrade-minutes prices the upgrade of a crossover design; --design ${design.kind} upgrades no cluster (add --design crossover)`,
        );
      const { ANALYSIS_WEATHER: model, DEFAULT_DESIGN_COSTS } = await import("../../analysis/power-types.ts");
      const costs = {
        installMinutes: parseCount("--install-minutes", flags.installMinutes, { min: 0, max: 10_000 }),
        iterationMinutes: parseCount("--iteration-minutes", flags.iterationMinutes, { max: 10_000 }),
        ...(design.kind === "crossover"
          ? {
              upgradeMinutes:
                flags.upgradeMinutes === undefined
                  ? DEFAULT_DESIGN_COSTS.upgradeMinutes
                  : parseCount("--upgrade-minutes", flags.upgradeMinutes, { min: 0, max: 10_000 }),
            }
          : {}),
      };
      const kindLabel = design.kind === "crossover" ? "crossover by upgrade" : `${design.kind} clusters`;
      const priced =
        design.kind === "crossover"
          ? `installs, upgrades (${costs.upgradeMinutes} min each) and iterations`
          : "installs and iterations";
      if (flags.detect) {
        const change = parseRateChange("--detect", flags.detect);
        const { cheapestDesign } = await import("../../analysis/cheapest-design.ts");
        const choice = cheapestDesign({
          ...change,
          kind: design.kind,
          tests: design.tests,
          model,
          costs,
          seed: flags.seed,
        });
        const simulation = { model, seed: flags.seed };
        // A crossover's figures rest on what the upgrade changes by itself: the chosen design's plan says how often that is blamed on the PR.
        const notes =
          choice && design.kind === "crossover"
            ? (await import("../../analysis/plan-power.ts")).planPower({
                design: choice.design,
                model,
                costs,
                seed: flags.seed,
              }).notes
            : [];
        process.stdout.write(
          flags.output === "json"
            ? `${JSON.stringify({ detect: change, choice, prices: costs, simulation, notes }, null, 2)}\n`
            : choice
              ? `for ${percent(change.from)} → ${percent(change.to)} you need ${choice.design.clustersPerArm} clusters × ${choice.design.iterationsPerCluster} iterations per arm (${kindLabel}): ${choice.cost.clusterHours} cluster-hours on ${choice.cost.clusters} clusters (${priced}), simulated power ${percent(choice.power)} (seed "${flags.seed}")\n${notes.map((note) => `${note}\n`).join("")}`
              : `no ${kindLabel} design up to 40 clusters per arm detects ${percent(change.from)} → ${percent(change.to)} with 80% power\n`,
        );
        process.exitCode = choice ? 0 : 1;
        return;
      }
      const { planPower } = await import("../../analysis/plan-power.ts");
      const plan = planPower({ design, model, costs, seed: flags.seed });
      if (flags.output === "json") {
        process.stdout.write(`${JSON.stringify(plan, null, 2)}\n`);
        return;
      }
      const rows = plan.classes.map(
        ({ label, detectableRise }) =>
          `  ${label.padEnd(10)} ${detectableRise === null ? "no rise up to 100% is seen" : points(detectableRise)}`,
      );
      process.stdout.write(
        `${design.clustersPerArm} clusters × ${design.iterationsPerCluster} iterations per arm, ${kindLabel}, ${design.tests} tests: ` +
          `${plan.cost.clusterHours} cluster-hours on ${plan.cost.clusters} clusters (${priced})\n` +
          `smallest rise seen with 80% power (${plan.simulation.rule}):\n${rows.join("\n")}\n` +
          `simulated under the analysis' cluster weather (a quarter of clusters bad, log-odds spread ${model.clusterSpread}), seed "${flags.seed}", ${plan.simulation.rounds * plan.simulation.copies} regressions per point\n` +
          plan.notes.map((note) => `${note}\n`).join(""),
      );
    });
}
