import { designCost } from "./design-cost.ts";
import {
  BASE_RATE_CLASSES,
  type DesignCosts,
  type PowerDesign,
  type PowerSimulation,
  type WeatherModel,
} from "./power-types.ts";
import { simulatePower, type PowerPoint, type UpgradeBlame } from "./simulate-power.ts";
import { DEFAULT_ANALYSIS_SETTINGS } from "./types.ts";

/** The rises (absolute failure-rate points) power is simulated at; the planner interpolates between them. */
const RISES = [0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];

export interface PowerPlan {
  design: PowerDesign;
  /** Installs, upgrades (crossover) and iterations, at `prices`. */
  cost: { clusters: number; clusterHours: number };
  prices: DesignCosts;
  classes: {
    label: string;
    baseRate: number;
    /** Smallest rise (absolute points) flagged with the target power; null when no rise up to 100% is. */
    detectableRise: number | null;
    curve: PowerPoint[];
  }[];
  simulation: {
    model: WeatherModel;
    seed: string;
    rounds: number;
    copies: number;
    rule: string;
    /** Crossover: how often the simulated runs called a test only the upgrade changed a regression. */
    upgrade: UpgradeBlame | null;
  };
  /** What a reader must know to read the figures (a crossover's upgrade effect). */
  notes: string[];
}

const percent = (value: number) => `${Math.round(value * 1000) / 10}%`;

/** What the figures of a crossover assume of the upgrade, and what that costs the analysis. */
function upgradeNote(model: WeatherModel, blame: UpgradeBlame): string {
  const { testShare, odds } = model.upgrade;
  return (
    `upgrade effect (assumed): ${percent(testShare)} of tests fail ${odds}× as often (odds) after any upgrade, whatever the payload; ` +
    `the analysis cannot tell that from the PR's effect (a cluster never goes back, docs/analysis.md) and counts it as the PR's, as this simulation does: ` +
    `${blame.runsBlamed} of ${blame.runs} simulated runs called a test only the upgrade changed a regression (${blame.blamed} of ${blame.changed} such tests)`
  );
}

/** Where `power` is first reached along a rising curve, linearly between the grid points; null if never. */
function interpolateRise(curve: readonly PowerPoint[], power: number): number | null {
  const index = curve.findIndex((point) => point.power >= power);
  if (index < 0) return null;
  const at = curve[index]!;
  const before = curve[index - 1];
  if (!before || at.power === before.power) return at.rise;
  const share = (power - before.power) / (at.power - before.power);
  return Math.round((before.rise + share * (at.rise - before.rise)) * 1000) / 1000;
}

/**
 * What a design can see: per test class (clean, a 2% flake, a 10% flake), the smallest rise in its
 * failure rate the analysis' cluster rule flags with 80% power at its false discovery rate, by
 * seeded simulation under `model`, and what the design costs in cluster-hours.
 */
export function planPower({
  design,
  model,
  costs,
  seed,
  rounds = 6,
  copies = 40,
  settings = DEFAULT_ANALYSIS_SETTINGS,
}: PowerSimulation & { design: PowerDesign }): PowerPlan {
  const points = BASE_RATE_CLASSES.flatMap(({ baseRate }) =>
    RISES.filter((rise) => baseRate + rise <= 1).map((rise) => ({ baseRate, rise })),
  );
  const simulated = simulatePower({ design, model, points, rounds, copies, seed, settings });
  return {
    design,
    cost: designCost(design, costs),
    prices: costs,
    classes: BASE_RATE_CLASSES.map(({ label, baseRate }) => {
      const curve = simulated.points.filter((point) => point.baseRate === baseRate);
      return { label, baseRate, detectableRise: interpolateRise(curve, settings.power), curve };
    }),
    simulation: {
      model,
      seed,
      rounds,
      copies,
      rule: `cluster rule, one regression among ${design.tests} tests, Benjamini–Hochberg q = ${settings.q}, power ${settings.power}`,
      upgrade: simulated.upgrade,
    },
    notes: simulated.upgrade ? [upgradeNote(model, simulated.upgrade)] : [],
  };
}
