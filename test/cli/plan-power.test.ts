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

  it("refuses a change to detect that is not a rise, saying what it expects", async () => {
    const result = await runNetstress(["plan-power", "--detect", "0.10:0.02"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--detect expects P0:P1");
  });
});
