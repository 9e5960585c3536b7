import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildSampleBinaries,
  type SampleBinaries,
} from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import { ADVERSARIAL, writeAdversarialBinary } from "../helpers/adversarial-binary.ts";
import { runNetstress } from "../helpers/run-netstress.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let dir: { path: string; remove: () => Promise<void> };
let samples: SampleBinaries;
let adversarial: string;
const env = {
  ...process.env,
  SAMPLE_EXT_SEED: "cli-tests",
  SAMPLE_EXT_TIME_SCALE: "0.05",
  NETSTRESS_BINARY_ENV: "SAMPLE_EXT_SEED,SAMPLE_EXT_TIME_SCALE",
};

beforeAll(async () => {
  dir = await tempDir();
  samples = await buildSampleBinaries({ outDir: join(dir.path, "samples") });
  adversarial = await writeAdversarialBinary(dir.path);
});
afterAll(() => dir.remove());

describe("netstress run", () => {
  it("exits 0 and prints where the results are when no blocking test failed", async () => {
    const out = join(dir.path, "ok");
    const result = await runNetstress(
      [
        "run",
        "--binary",
        `adversarial=${adversarial}`,
        "--focus",
        "adversarial passes",
        "--iterations",
        "3",
        "--out",
        out,
      ],
      { env },
    );
    expect(result.stderr).toContain("seed");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(join(out, "results.jsonl"));
    expect((await readFile(join(out, "results.jsonl"), "utf8")).trim().split("\n")).toHaveLength(3);
  });

  it("exits 1 when a blocking test failed in the PR arm", async () => {
    const result = await runNetstress(
      [
        "run",
        "--binary",
        `adversarial=${adversarial}`,
        "--focus",
        "always fails",
        "--iterations",
        "1",
        "--retries",
        "0",
        "--out",
        join(dir.path, "fail"),
      ],
      { env },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/\n?netstress: 1 execution\(s\) of blocking tests failed\n$/);
  });

  it("runs a baseline arm beside the PR arm with --baseline-binary and marks sources", async () => {
    const out = join(dir.path, "arms");
    const result = await runNetstress(
      [
        "run",
        "--binary",
        `ovn-kubernetes=${samples.pr["ovn-kubernetes"]}`,
        "--binary",
        `sdn=${samples.released.sdn}`,
        "--baseline-binary",
        `ovn-kubernetes=${samples.released["ovn-kubernetes"]}`,
        "--focus",
        "DNS",
        "--iterations",
        "2",
        "--out",
        out,
      ],
      { env },
    );
    expect(result.code).toBe(0);
    const records = (await readFile(join(out, "results.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { arm: string; source: string });
    expect(records.filter((r) => r.arm === "pr").every((r) => r.source === "override")).toBe(true);
    expect(records.filter((r) => r.arm === "baseline").every((r) => r.source === "released")).toBe(true);
    // With a baseline arm the run ends with the comparison and its reports.
    expect(result.stdout).toContain(`report:    ${join(out, "report.html")}`);
    expect(await readFile(join(out, "summary.json"), "utf8")).toContain('"conclusion"');
  });

  it.each([
    [["run"], /nothing to run: give --binary TAG=PATH/],
    [["run", "--binary", "no-equals-sign"], /--binary expects TAG=VALUE/],
    [["run", "--binary", "a=x", "--iterations", "zero"], /--iterations expects a whole number from 1/],
    [["run", "--binary", "a=x", "--timeout", "soon"], /--timeout expects a duration such as 90s/],
    [["run", "--binary", "a=x", "--arch", "sparc"], /--arch: unknown architecture "sparc"/],
    [["run", "--binary", "a=/does/not/exist"], /test binary \/does\/not\/exist does not exist/],
    [
      ["run", "--binary", "a=x", "--baseline-binary", "b=y"],
      /--baseline-binary b=… has no matching --binary b=…/,
    ],
  ])("exits 2 with a one-line reason for %j", async (args, reason) => {
    const result = await runNetstress(args, { env, cwd: dir.path });
    expect(result.code).toBe(2);
    const lines = result.stderr.trim().split("\n");
    expect(lines[lines.length - 1]).toMatch(reason);
    expect(lines[lines.length - 1]).toMatch(/^netstress: /);
  });

  it("on SIGINT kills running tests, keeps the results so far and exits 2 saying so", async () => {
    const out = join(dir.path, "interrupted");
    let recorded = "";
    const result = await runNetstress(
      [
        "run",
        "--binary",
        `adversarial=${adversarial}`,
        "--focus",
        "adversarial",
        "--iterations",
        "20",
        "--parallel",
        "2",
        "--timeout",
        "10m",
        "--out",
        out,
      ],
      {
        env,
        onSpawn: (child) => {
          // One SIGINT: reads still in flight when the first saw the record must not send a second,
          // which quits at once (exit 130) as a second Ctrl-C does.
          let interrupted = false;
          const poll = setInterval(async () => {
            recorded = await readFile(join(out, "results.jsonl"), "utf8").catch(() => "");
            if (!interrupted && recorded.includes(ADVERSARIAL.passes)) {
              interrupted = true;
              clearInterval(poll);
              child.kill("SIGINT");
            }
          }, 100);
        },
      },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/cancelled by SIGINT; partial results are in/);
    const manifest = JSON.parse(await readFile(join(out, "run.json"), "utf8")) as { status: string };
    expect(manifest.status).toBe("cancelled");
    const kept = (await readFile(join(out, "results.jsonl"), "utf8")).trim().split("\n");
    expect(kept.length).toBeGreaterThan(0);
  });

  it("writes --cluster-label as `cluster` on every record, and refuses a label that is not one", async () => {
    const out = join(dir.path, "labelled");
    const args = ["run", "--binary", `adversarial=${adversarial}`, "--focus", "adversarial passes"];
    const result = await runNetstress(
      [...args, "--iterations", "2", "--cluster-label", "ci-ln-4x7.aws-2", "--out", out],
      { env },
    );
    expect(result.code).toBe(0);
    const records = (await readFile(join(out, "results.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { cluster?: string });
    expect(records).toHaveLength(2);
    expect(records.map((record) => record.cluster)).toEqual(["ci-ln-4x7.aws-2", "ci-ln-4x7.aws-2"]);

    const refused = await runNetstress(
      [...args, "--cluster-label", "a b; rm -rf /", "--out", join(dir.path, "bad")],
      {
        env,
      },
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--cluster-label");
    expect(refused.stderr).toContain("a cluster label is");
  });

  it("documents every option in --help", async () => {
    const result = await runNetstress(["run", "--help"]);
    expect(result.code).toBe(0);
    for (const option of [
      "--binary",
      "--baseline-binary",
      "--iterations",
      "--parallel",
      "--seed",
      "--focus",
      "--out",
      "--timeout",
      "--cluster-label",
    ]) {
      expect(result.stdout).toContain(option);
    }
  });
});
