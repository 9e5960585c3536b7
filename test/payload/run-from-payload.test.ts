import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildSamplePayload,
  type SamplePayload,
} from "@netstress/testbed/sample-payload/build-sample-payload.ts";
import {
  ovnKubernetesPr,
  ovnKubernetesReleased,
  REGRESSED_TEST,
} from "@netstress/testbed/sample-ext/suites.ts";
import { runNetstress } from "../helpers/run-netstress.ts";

let work: string;
let sample: SamplePayload;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "netstress-run-payload-"));
  sample = await buildSamplePayload({ outDir: join(work, "payload") });
});
afterAll(() => rm(work, { recursive: true, force: true }));

type Record_ = { name: string; arm: string; component: string; source: string; attempt: number };

/** `netstress run --payload … --baseline` over one test; its first-attempt records. */
async function runOne(name: string, args: string[]): Promise<Record_[]> {
  const out = join(work, name);
  const { code } = await runNetstress([
    "run",
    ...args,
    "--arch",
    "amd64",
    "--baseline",
    "--iterations",
    "1",
    "--focus",
    "DNS should resolve cluster-local service names",
    "--out",
    out,
    "--cache-dir",
    join(work, "cache"),
  ]);
  expect([0, 1]).toContain(code);
  return (await readFile(join(out, "results.jsonl"), "utf8"))
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record_)
    .filter((r) => r.attempt === 0);
}

describe("netstress run --payload", () => {
  it("runs a PR tag rebuilt from the released clean commit as released, and a dirty rebuild as the PR's", async () => {
    const sources = (records: Record_[]) => records.map((r) => `${r.arm}:${r.component}:${r.source}`).sort();
    const rebuilt = await runOne("rebuilt", [
      "--payload",
      sample.rebuiltPayload,
      "--baseline-payload",
      sample.payload,
    ]);
    expect(sources(rebuilt)).toEqual(["baseline:ovn-kubernetes:released", "pr:ovn-kubernetes:released"]);
    const dirty = await runOne("dirty", [
      "--payload",
      sample.dirtyPayload,
      "--baseline-payload",
      sample.payload,
    ]);
    expect(sources(dirty)).toEqual(["baseline:ovn-kubernetes:released", "pr:ovn-kubernetes:override"]);
  });

  it("runs the PR build of the overridden tag beside the released binaries as the baseline arm", async () => {
    const out = join(work, "out");
    const { code } = await runNetstress([
      "run",
      "--payload",
      sample.payload,
      "--arch",
      "amd64",
      "--override",
      `${sample.override.tag}=${sample.override.image}`,
      "--baseline",
      "--iterations",
      "1",
      "--focus",
      "NodePort service should be reachable from the host network",
      "--out",
      out,
      "--cache-dir",
      join(work, "cache"),
    ]);
    // 1 means a blocking test failed (the PR made this one flaky); 2 would be a broken run.
    expect([0, 1]).toContain(code);
    const records = (await readFile(join(out, "results.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map(
        (line) =>
          JSON.parse(line) as {
            name: string;
            arm: string;
            component: string;
            source: string;
            attempt: number;
          },
      );
    expect(
      records
        .filter((r) => r.attempt === 0)
        .map((r) => [r.name, r.arm, r.component, r.source])
        .sort(),
    ).toEqual([
      [REGRESSED_TEST, "baseline", "ovn-kubernetes", "released"],
      [REGRESSED_TEST, "pr", "ovn-kubernetes", "override"],
    ]);
    // Each arm ran the binary built from its own commit: the PR's, and the released one.
    const run = JSON.parse(await readFile(join(out, "run.json"), "utf8")) as {
      components: Array<{ arm: string; component: string; info: { source: { commit: string } } }>;
    };
    const commitOf = (arm: string) =>
      run.components.find((c) => c.arm === arm && c.component === "ovn-kubernetes")?.info.source.commit;
    expect(commitOf("pr")).toBe(ovnKubernetesPr.commit);
    expect(commitOf("baseline")).toBe(ovnKubernetesReleased.commit);
  });
});
