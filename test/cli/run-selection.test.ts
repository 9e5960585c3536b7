import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSampleBinary } from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import {
  AWS_ONLY_TEST,
  DISRUPTIVE_TEST,
  SERIAL_TEST,
  isolationSample,
} from "@netstress/testbed/sample-ext/suites.ts";
import { runNetstress } from "../helpers/run-netstress.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let dir: { path: string; remove: () => Promise<void> };
let binary: string;
const env = {
  ...process.env,
  SAMPLE_EXT_SEED: "cli-selection",
  SAMPLE_EXT_TIME_SCALE: "0",
  KUBECONFIG: "",
  NETSTRESS_BINARY_ENV: "SAMPLE_EXT_SEED,SAMPLE_EXT_TIME_SCALE",
};

beforeAll(async () => {
  dir = await tempDir();
  binary = await writeSampleBinary({ suite: isolationSample, path: join(dir.path, "cno-tests-ext") });
});
afterAll(() => dir.remove());

const names = async (out: string) =>
  new Set(
    (await readFile(join(out, "results.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { name: string }).name),
  );

describe("netstress run selection options", () => {
  it("runs a suite with [Disruptive] tests when asked, in the environment given, and records both", async () => {
    const out = join(dir.path, "serial");
    const result = await runNetstress(
      [
        "run",
        "--binary",
        `cluster-network-operator=${binary}`,
        "--suite",
        "openshift/conformance/serial",
        "--environment",
        "platform=aws",
        "--environment",
        "optional-capability=Console",
        "--include-disruptive",
        "--network-parallel",
        "2",
        "--iterations",
        "1",
        "--out",
        out,
      ],
      { env },
    );
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    expect(await names(out)).toEqual(new Set([SERIAL_TEST]));
    const manifest = JSON.parse(await readFile(join(out, "run.json"), "utf8")) as Record<string, unknown>;
    expect(manifest).toMatchObject({
      suite: "openshift/conformance/serial",
      includeDisruptive: true,
      networkParallel: 2,
      environment: { platform: "aws", optionalCapabilities: ["Console"] },
      environmentSource: "flags",
    });

    const disruptive = join(dir.path, "disruptive");
    await runNetstress(
      [
        "run",
        "--binary",
        `cluster-network-operator=${binary}`,
        "--include-disruptive",
        "--iterations",
        "1",
        "--out",
        disruptive,
      ],
      { env },
    );
    const ran = await names(disruptive);
    expect(ran).toContain(DISRUPTIVE_TEST);
    expect(ran).toContain(AWS_ONLY_TEST); // no environment: every test is listed, as the binaries do
  }, 60_000);

  it("explains a bad --environment flag and an unknown suite, exiting 2", async () => {
    const bad = await runNetstress(
      [
        "run",
        "--binary",
        `cluster-network-operator=${binary}`,
        "--environment",
        "cloud=aws",
        "--out",
        join(dir.path, "x"),
      ],
      { env },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--environment: "cloud" is not an environment flag; use one of platform');

    const unknown = await runNetstress(
      [
        "run",
        "--binary",
        `cluster-network-operator=${binary}`,
        "--suite",
        "nope",
        "--out",
        join(dir.path, "y"),
      ],
      { env },
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no binary of the plan advertises the suite "nope"; known suites:');
  }, 60_000);

  it("writes a report that shows the environment, which tests ran alone, the details and links to artifacts", async () => {
    const out = join(dir.path, "report");
    const result = await runNetstress(
      [
        "run",
        "--binary",
        `cluster-network-operator=${binary}`,
        "--baseline-binary",
        `cluster-network-operator=${binary}`,
        "--environment",
        "network=ovn",
        "--iterations",
        "1",
        "--out",
        out,
      ],
      { env },
    );
    expect(result.code, result.stderr).toBe(0);
    const html = await readFile(join(out, "report.html"), "utf8");
    expect(html).toContain("<dt>environment</dt><dd>network=ovn (given)</dd>");
    expect(html).toContain("<dt>[Disruptive] tests</dt><dd>left out</dd>");
    expect(html).toMatch(
      /id="ran-alone".*EgressFirewall should block egress to denied CIDRs \[Serial\]<\/td><td>\[Serial\]/s,
    );
    expect(html).toContain("2 by environment, 1 [Disruptive]");
    expect(html).toContain("{&quot;name&quot;:&quot;nodes-checked&quot;,&quot;value&quot;:6}");
    const link = /<a href="(artifacts\/pr\/cluster-network-operator\/[^"]+)">/.exec(html);
    expect(link).not.toBeNull();
    expect(await readFile(join(out, decodeURIComponent(link![1]!)), "utf8")).toContain("OVN flows");
  }, 60_000);
});
