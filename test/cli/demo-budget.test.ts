import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runNetstress } from "../helpers/run-netstress.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let dir: { path: string; remove: () => Promise<void> };

beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

describe("netstress demo's budget", () => {
  it("says, before anything starts, when the budget pays for no batch of the crossover", async () => {
    const out = join(dir.path, "demo");
    const result = await runNetstress(["demo", "--budget", "1", "--out", out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "--budget 1: pays for no batch of the crossover, not even one new cluster with its upgrade and its iterations in each arm",
    );
    expect(existsSync(out)).toBe(false);
  });
});
