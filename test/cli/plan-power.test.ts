import { describe, expect, it } from "vitest";
import { runNetstress } from "../helpers/run-netstress.ts";

describe("netstress plan-power", () => {
  it("states per test class the rise a design sees, its cost, and the simulation's model and seed", async () => {
    const result = await runNetstress([
      "plan-power",
      "--clusters",
      "3",
      "--iterations",
      "3",
      "--tests",
      "30",
      "--design",
      "shared",
      "-o",
      "json",
    ]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const plan = JSON.parse(result.stdout) as {
      cost: { clusters: number; clusterHours: number };
      classes: { label: string; detectableRise: number | null }[];
      simulation: { seed: string; model: { badClusterShare: number } };
    };
    // 3 shared clusters, each installed once (45 min) and running 2 × 3 iterations of 10 min.
    expect(plan.cost).toEqual({ clusters: 3, clusterHours: 5.3 });
    expect(plan.classes.map((entry) => entry.label)).toEqual(["clean", "2% flake", "10% flake"]);
    expect(plan.simulation.seed).toBe("netstress-plan-power");
    expect(plan.simulation.model.badClusterShare).toBe(0.25);
  });

  it("plans a crossover: each cluster's install, upgrade and both arms' iterations priced, and the upgrade effect it assumes stated", async () => {
    const args = [
      "plan-power",
      "--design",
      "crossover",
      "--clusters",
      "3",
      "--iterations",
      "3",
      "--tests",
      "30",
    ];
    const [priced, byDefault, table] = await Promise.all([
      runNetstress([...args, "--upgrade-minutes", "20", "-o", "json"]),
      runNetstress([...args, "-o", "json"]),
      runNetstress(args),
    ]);
    expect(priced.stderr).toBe("");
    const plan = JSON.parse(priced.stdout) as {
      cost: { clusters: number; clusterHours: number };
      prices: { upgradeMinutes: number };
      simulation: { upgrade: { runs: number } };
      notes: string[];
    };
    // 3 clusters, each installed (45 min), upgraded (20) and running 2 × 3 iterations of 10 min.
    expect(plan.cost).toEqual({ clusters: 3, clusterHours: 6.3 });
    expect(plan.prices.upgradeMinutes).toBe(20);
    expect(plan.simulation.upgrade.runs).toBe(6);
    expect(plan.notes[0]).toContain(
      "upgrade effect (assumed): 2% of tests fail 4× as often (odds) after any upgrade, whatever the payload",
    );
    // An upgrade costs 30 minutes unless said otherwise.
    expect((JSON.parse(byDefault.stdout) as typeof plan).cost).toEqual({ clusters: 3, clusterHours: 6.8 });
    expect(table.stdout).toContain(
      "3 clusters × 3 iterations per arm, crossover by upgrade, 30 tests: 6.8 cluster-hours on 3 clusters (installs, upgrades (30 min each) and iterations)",
    );
    expect(table.stdout).toContain("counts it as the PR's");
  });

  it("finds the cheapest crossover for a stated change, its upgrades priced in", async () => {
    const result = await runNetstress([
      "plan-power",
      "--design",
      "crossover",
      "--detect",
      "0.02:0.9",
      "--tests",
      "20",
      "--upgrade-minutes",
      "15",
    ]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const found =
      /you need (\d+) clusters × (\d+) iterations per arm \(crossover by upgrade\): ([\d.]+) cluster-hours on (\d+) clusters \(installs, upgrades \(15 min each\) and iterations\)/.exec(
        result.stdout,
      );
    expect(found).not.toBeNull();
    const [clusters, iterations, hours, installed] = found!.slice(1).map(Number);
    expect(installed).toBe(clusters);
    expect(hours).toBe(Math.round((clusters! * (45 + 15 + 2 * iterations! * 10)) / 6) / 10);
    expect(result.stdout).toContain("upgrade effect (assumed)");
  });

  it("refuses an upgrade price for a design that upgrades no cluster, and one that is not a number of minutes", async () => {
    const [separate, negative] = await Promise.all([
      runNetstress(["plan-power", "--upgrade-minutes", "20"]),
      runNetstress(["plan-power", "--design", "crossover", "--upgrade-minutes", "-3"]),
    ]);
    expect(separate.code).toBe(2);
    expect(separate.stderr).toContain(
      "--upgrade-minutes prices the upgrade of a crossover design; --design separate upgrades no cluster",
    );
    expect(negative.code).toBe(2);
    expect(negative.stderr).toContain('--upgrade-minutes expects a whole number from 0 to 10000, got "-3"');
  });

  it("refuses a change to detect that is not a rise, saying what it expects", async () => {
    const result = await runNetstress(["plan-power", "--detect", "0.10:0.02"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--detect expects P0:P1");
  });
});
