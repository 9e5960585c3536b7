import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildSamplePayload,
  type SamplePayload,
} from "@netstress/testbed/sample-payload/build-sample-payload.ts";
import { createPayloadPlanResolver } from "../../src/queue/payload-plan-resolver.ts";
import { createRegistry } from "../../src/registry/create-registry.ts";
import type { ResolveRunPlan } from "../../src/runs/plan-resolver.ts";
import type { RunRecord } from "../../src/runs/run-record.ts";
import { runRecord } from "../helpers/github-run-deps.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let dir: Awaited<ReturnType<typeof tempDir>>;
let sample: SamplePayload;
let resolve: ResolveRunPlan;

beforeAll(async () => {
  dir = await tempDir();
  sample = await buildSamplePayload({ outDir: join(dir.path, "layout"), arches: ["amd64"] });
  const cacheDir = join(dir.path, "cache");
  resolve = createPayloadPlanResolver({ registry: await createRegistry({ cacheDir }) });
});
afterAll(async () => dir.remove());

const runFor = (source: Partial<RunRecord["source"]>, options: Partial<RunRecord["options"]> = {}) =>
  runRecord({
    source: {
      ...runRecord().source,
      payload: sample.payload,
      prImage: `oci:${sample.layoutDir}:pr-{tag}`,
      ...source,
    },
    options: { iterations: 5, baseline: "payload", ...options },
  });
const signal = AbortSignal.timeout(120_000);

describe("plan resolution from the payload and the PR's images", () => {
  it("takes the PR's binary for the repository's tags and the released ones beside it", async () => {
    const resolution = await resolve({ run: runFor({ tags: ["ovn-kubernetes"] }), signal });
    expect(resolution.kind).toBe("ready");
    const plan = resolution.kind === "ready" ? resolution.plan : undefined;
    const arms = Object.fromEntries(
      plan!.arms.map((a) => [a.arm, a.components.map((c) => `${c.component}:${c.source}`).sort()]),
    );
    expect(arms).toEqual({
      pr: ["ovn-kubernetes:override", "sdn:released"],
      baseline: ["ovn-kubernetes:released", "sdn:released"],
    });
    expect(plan!.arms[0]!.components.find((c) => c.component === "ovn-kubernetes")!.image).toBe(
      `oci:${sample.layoutDir}:pr-ovn-kubernetes`,
    );
  });

  it("records the release names of a gate's candidate and baseline, which decide whether its clusters may be moved between them", async () => {
    const gate = {
      ...runFor({}),
      subject: {
        kind: "gate" as const,
        gateId: "g",
        payload: sample.prPayload,
        baselinePayload: sample.payload,
      },
    };
    const resolution = await resolve({ run: gate, signal });
    expect(resolution.kind === "ready" && resolution.payloads?.names).toEqual({
      pr: `${sample.releaseName}-pr`,
      baseline: sample.releaseName,
    });
  });

  it("runs the PR arm alone with baseline=none", async () => {
    const resolution = await resolve({
      run: runFor({ tags: ["ovn-kubernetes"] }, { baseline: "none" }),
      signal,
    });
    expect(resolution.kind === "ready" && resolution.plan.arms.map((a) => a.arm)).toEqual(["pr"]);
  });

  it("waits for a PR image that is not published yet, naming it", async () => {
    const resolution = await resolve({
      run: runFor({ tags: ["ovn-kubernetes"], prImage: `oci:${sample.layoutDir}:pr{pr}-{sha}-{tag}` }),
      signal,
    });
    expect(resolution).toEqual({
      kind: "images-pending",
      missing: [`oci:${sample.layoutDir}:pr7-${"a".repeat(40)}-ovn-kubernetes`],
    });
  });

  it("asks for action when the configuration cannot name the images", async () => {
    expect(
      await resolve({ run: runFor({ tags: ["ovn-kubernetes"], prImage: undefined }), signal }),
    ).toMatchObject({
      kind: "unavailable",
      conclusion: "action_required",
      reason: "tags are set but pr_image is not: say where CI publishes the PR's images",
    });
    expect(await resolve({ run: runFor({ payload: undefined }), signal })).toMatchObject({
      kind: "unavailable",
      conclusion: "action_required",
      reason: "no payload to test against: set payload in .github/network-stress.yml",
    });
  });

  it("fails with the registry's reason when the payload has no such arch", async () => {
    const resolution = await resolve({ run: { ...runFor({ tags: [] }), arch: "s390x" }, signal });
    expect(resolution).toMatchObject({ kind: "unavailable", conclusion: "failure" });
    expect(resolution.kind === "unavailable" && resolution.reason).toMatch(/s390x/);
  });
});
