import type { ClusterCounts } from "./cluster-exact-test.ts";
import type { PowerDesign, WeatherModel } from "./power-types.ts";

const logit = (p: number) => Math.log(p / (1 - p));
const expit = (x: number) => 1 / (1 + Math.exp(-x));

/** Standard normal draw (Box–Muller). */
const normal = (random: () => number) =>
  Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());

function drawBaseRate(random: () => number, model: WeatherModel): number {
  let draw = random();
  for (const { rate, share } of model.baseRates) {
    if (draw < share) return rate;
    draw -= share;
  }
  return model.baseRates.at(-1)!.rate;
}

function failures(random: () => number, runs: number, rate: number): number {
  let failed = 0;
  for (let i = 0; i < runs; i++) if (random() < rate) failed++;
  return failed;
}

/**
 * One simulated run's per-cluster counts under the weather model: `background` tests of the model's
 * base-rate mix whose failure rate the PR leaves alone, and `planted` tests at a stated base rate
 * whose rate the PR raises by `rise` (absolute, capped at 1) on every PR cluster. With `separate`
 * clusters each arm's cluster draws its own weather; with `shared` and `crossover` ones both arms see
 * the same cluster's weather (its bad days and each test's offset on it; a crossover cluster keeps
 * it through its upgrade). A crossover's PR half runs after the upgrade, so a test the upgrade
 * changes (`model.upgrade`, drawn per test) fails more often in the PR arm whatever the PR does;
 * `upgraded` says which tests those were.
 */
export function simulateWeatherCounts({
  random,
  model,
  design,
  background,
  planted = [],
}: {
  random: () => number;
  model: WeatherModel;
  design: Pick<PowerDesign, "kind" | "clustersPerArm" | "iterationsPerCluster">;
  background: number;
  planted?: readonly { baseRate: number; rise: number }[];
}): {
  background: [ClusterCounts, ClusterCounts][];
  planted: [ClusterCounts, ClusterCounts][];
  /** Per background test, whether the upgrade changed it (always false unless `crossover`). */
  upgraded: boolean[];
} {
  const { clustersPerArm: clusters, iterationsPerCluster: n, kind } = design;
  const badOf = () => Array.from({ length: clusters }, () => random() < model.badClusterShare);
  const prBad = badOf();
  const sameWeather = kind !== "separate";
  const baselineBad = sameWeather ? prBad : badOf();
  const runs = new Array<number>(clusters).fill(n);
  const offset = (bad: boolean) =>
    model.clusterSpread * normal(random) +
    (bad && random() < model.badTestShare ? Math.log(model.badOdds) : 0);
  const upgradeShift = Math.log(model.upgrade.odds);
  const upgraded: boolean[] = [];
  const simulateTest = (base: number, rise: number): [ClusterCounts, ClusterCounts] => {
    const logOdds = logit(base);
    // Drawn only where an upgrade can change a test, so that the other designs' seeded figures stay
    // as they were and a crossover without an upgrade effect draws as shared clusters do.
    const changed = kind === "crossover" && model.upgrade.testShare > 0 && random() < model.upgrade.testShare;
    upgraded.push(changed);
    const prShift = changed ? upgradeShift : 0;
    const pr: number[] = [];
    const baseline: number[] = [];
    for (let k = 0; k < clusters; k++) {
      const prOffset = offset(prBad[k]!);
      const baselineOffset = sameWeather ? prOffset : offset(baselineBad[k]!);
      pr.push(failures(random, n, Math.min(1, expit(logOdds + prOffset + prShift) + rise)));
      baseline.push(failures(random, n, expit(logOdds + baselineOffset)));
    }
    return [
      { runs, failed: pr },
      { runs, failed: baseline },
    ];
  };
  const backgroundCounts = Array.from({ length: background }, () =>
    simulateTest(drawBaseRate(random, model), 0),
  );
  return {
    background: backgroundCounts,
    planted: planted.map(({ baseRate, rise }) => simulateTest(baseRate, rise)),
    upgraded: upgraded.slice(0, background),
  };
}
