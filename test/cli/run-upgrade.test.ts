import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSampleBinary } from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import { UPGRADE_TEST, upgradeSample } from "@netstress/testbed/sample-ext/suites.ts";
import { runNetstress } from "../helpers/run-netstress.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let dir: { path: string; remove: () => Promise<void> };
let binary: string;
const env = {
  ...process.env,
  SAMPLE_EXT_SEED: "cli-upgrade",
  SAMPLE_EXT_TIME_SCALE: "0",
  KUBECONFIG: "",
  NETSTRESS_BINARY_ENV: "SAMPLE_EXT_SEED,SAMPLE_EXT_TIME_SCALE",
};
const TARGET = `quay.io/netstress/pr-release@sha256:${"1".repeat(64)}`;

beforeAll(async () => {
  dir = await tempDir();
  binary = await writeSampleBinary({ suite: upgradeSample, path: join(dir.path, "upgrade-tests-ext") });
});
afterAll(() => dir.remove());

describe("netstress run --upgrade-target", () => {
  it("gives the arm's [Upgrade] test its target, disruptive tests included, once per cluster", async () => {
    const out = join(dir.path, "upgrade");
    const result = await runNetstress(
      ["run", "--binary", `netstress-network-tests=${binary}`, "--upgrade-target", `pr=${TARGET}`].concat([
        "--cluster-label",
        "lab/a",
        "--iterations",
        "2",
        "--out",
        out,
      ]),
      { env },
    );
    expect(result.code).toBe(0);
    const upgrades = (await readFile(join(out, "results.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { name: string; iteration: number; result: string; output: string })
      .filter((r) => r.name === UPGRADE_TEST)
      .sort((a, b) => a.iteration - b.iteration);
    expect(upgrades.map((r) => r.result)).toEqual(["passed", "skipped"]);
    expect(upgrades[0]!.output).toContain(`upgraded the cluster to ${TARGET}`);
    expect(upgrades[1]!.output).toMatch(/runs the upgrade target already/);
  });

  it("refuses an arm it does not know or the run does not have, saying how to write it", async () => {
    const withTarget = (value: string, out: string) =>
      runNetstress(
        ["run", "--binary", `x=${binary}`, "--upgrade-target", value, "--out", join(dir.path, out)],
        { env },
      );
    const bad = await withTarget(`staging=${TARGET}`, "bad");
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("--upgrade-target expects ARM=PULLSPEC with ARM pr or baseline");
    const absent = await withTarget(`baseline=${TARGET}`, "absent");
    expect(absent.code).not.toBe(0);
    expect(absent.stderr).toContain("names the baseline arm, which this run does not have");
  });
});
