import { readFile, readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildComponentImage,
  buildLabels,
  buildReleaseImage,
} from "@netstress/testbed/sample-payload/build-release-image.ts";
import { buildImage, buildIndex, buildLayer } from "@netstress/testbed/sample-payload/oci-image-builder.ts";
import { buildSampleBinaries } from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import { NEW_TEST } from "@netstress/testbed/sample-ext/suites.ts";
import type { Arch } from "@netstress/core/arch/arch.ts";
import { createLocalExecutor } from "../../src/farm/local-executor.ts";
import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import { createPayloadPlanResolver } from "../../src/queue/payload-plan-resolver.ts";
import { createRegistry } from "../../src/registry/create-registry.ts";
import { sha256Digest } from "../../src/registry/digest.ts";
import type { ShardOutcome } from "../../src/runs/shard-executor.ts";
import { runRecord } from "../helpers/github-run-deps.ts";
import { localImages } from "../helpers/local-images.ts";
import { pushImage } from "../helpers/oci-push-image.ts";
import { pushReferrer } from "../helpers/oci-push-referrer.ts";
import { startReferrersFront, type ReferrersFront } from "../helpers/referrers-front.ts";
import { startRegistry, type RegistryServer } from "../helpers/start-registry.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let registry: RegistryServer;
let front: ReferrersFront;
let dir: Awaited<ReturnType<typeof tempDir>>;
let payload: string;
/** The digest of the sdn binary, which its image carries as a tests-extension referrer. */
let referredBinary: string;
let releasedOvn: Buffer;
const env = { ...process.env, SAMPLE_EXT_SEED: "binaries-by-image", SAMPLE_EXT_TIME_SCALE: "0" };

/**
 * A two-arch payload behind a front that records every request: ovn-kubernetes's image holds the
 * released binary for amd64 and the PR's (one more test, NEW_TEST) for arm64, and sdn ships its
 * binary as a referrer artifact of its image. The sample binaries are scripts: both arches run here.
 */
beforeAll(async () => {
  dir = await tempDir("netstress-binaries-by-image-");
  registry = await startRegistry();
  front = await startReferrersFront({ upstream: registry.url });
  const binaries = await buildSampleBinaries({ outDir: join(dir.path, "built"), gzip: true });
  releasedOvn = await readFile(binaries.released["ovn-kubernetes"]);
  const prOvn = await readFile(binaries.pr["ovn-kubernetes"]);
  const sdn = await readFile(binaries.released.sdn);
  referredBinary = sha256Digest(sdn);
  const labels = (tag: string) =>
    buildLabels(`${tag}-commit`.padEnd(40, "0"), `https://github.com/openshift/${tag}`);
  const binaryLayer = (content: Buffer) =>
    buildLayer([{ path: "usr/bin/ovn-kubernetes-tests-ext.gz", content, mode: 0o755 }]);
  const ovn = buildIndex([
    buildImage({ arch: "amd64", layers: [await binaryLayer(releasedOvn)], labels: labels("ovn-kubernetes") }),
    buildImage({ arch: "arm64", layers: [await binaryLayer(prOvn)], labels: labels("ovn-kubernetes") }),
  ]);
  const sdnImage = await buildComponentImage({ arches: ["amd64", "arm64"], labels: labels("sdn") });
  await pushImage({
    url: registry.url,
    repository: "ocp/release",
    tag: "component-ovn-kubernetes",
    image: ovn,
  });
  await pushImage({ url: registry.url, repository: "ocp/release", tag: "component-sdn", image: sdnImage });
  await pushReferrer({
    url: registry.url,
    repository: "ocp/release",
    subject: sdnImage.manifest,
    artifactType: "application/vnd.openshift.tests-extension.v1+gzip",
    title: "sdn-tests-ext.gz",
    content: sdn,
  });
  const release = await buildReleaseImage({
    name: "4.20.0-0.nightly-2026-12-01-000000",
    arches: ["amd64", "arm64"],
    tags: [
      { tag: "ovn-kubernetes", image: ovn },
      { tag: "sdn", image: sdnImage },
    ].map(({ tag, image }) => ({
      tag,
      pullspec: `${front.host}/ocp/release@${image.manifest.digest}`,
      commit: `${tag}-commit`.padEnd(40, "0"),
      sourceLocation: `https://github.com/openshift/${tag}`,
    })),
  });
  await pushImage({ url: registry.url, repository: "ocp/release", tag: "release", image: release });
  payload = `${front.host}/ocp/release:release`;
});
afterAll(async () => {
  await front?.stop();
  await registry?.stop();
  await dir?.remove();
});

/** A run on the payload's released binaries alone, for an arch. */
const runOn = (arch: Arch, extra: Parameters<typeof runRecord>[0] = {}) =>
  runRecord({
    arch,
    source: { tags: [], parallel: 2, timeoutMinutes: 60, imageWaitMinutes: 30, payload },
    options: { iterations: 1, baseline: "none" },
    ...extra,
  });

async function resolveFor(arch: Arch, cacheDir: string): Promise<ExecutionPlan> {
  const resolve = createPayloadPlanResolver({ registry: await createRegistry({ cacheDir }) });
  const resolution = await resolve({ run: runOn(arch), signal: AbortSignal.timeout(60_000) });
  if (resolution.kind !== "ready") throw new Error(`not ready: ${JSON.stringify(resolution)}`);
  return resolution.plan;
}

/** Runs one iteration of the plan's PR arm on this machine; the tests each component ran. */
async function runLocally(plan: ExecutionPlan, outDir: string, imagesDir: string) {
  const executor = createLocalExecutor({
    arches: ["amd64", "arm64"],
    cacheDir: join(dir.path, "unpacked"),
    images: await localImages(imagesDir),
    env,
  });
  const outcome: ShardOutcome = await executor.execute({
    shard: {
      runId: "r1",
      id: `${plan.arch}-0-1`,
      arch: plan.arch,
      arms: ["pr"],
      iterations: { first: 0, count: 1 },
      plan,
      seed: "s",
      parallel: 4,
      testTimeoutMs: 30_000,
      retries: 0,
    },
    outDir,
    signal: AbortSignal.timeout(120_000),
  });
  if (outcome.status !== "completed") return { outcome, tests: {} };
  const records = (await readFile(join(outDir, "results.jsonl"), "utf8"))
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { component: string; name: string });
  const tests: Record<string, string[]> = {};
  for (const r of records) (tests[r.component] ??= []).push(r.name);
  for (const names of Object.values(tests)) names.sort();
  return { outcome, tests };
}

describe("binaries named by image", () => {
  it("resolving a run fetches no test binary: discovery reads each layer once, a referrer's binary not at all", async () => {
    const cacheDir = join(dir.path, "farm-cache");
    front.requests.length = 0;

    const plan = await resolveFor("amd64", cacheDir);

    const blobs = front.requests.filter((path) => path.includes("/blobs/"));
    const readTwice = blobs.filter((path, i) => blobs.indexOf(path) !== i);
    expect({ readTwice, referrerBinaryRead: blobs.some((path) => path.endsWith(referredBinary)) }).toEqual({
      readTwice: [],
      referrerBinaryRead: false,
    });
    expect(await readdir(cacheDir)).not.toContain("binaries");
    // Each binary is named by its image, for whoever runs it to get.
    const components = plan.arms[0]!.components;
    expect(components.map((c) => [c.component, c.binary, c.imagePath])).toEqual([
      ["ovn-kubernetes", undefined, "/usr/bin/ovn-kubernetes-tests-ext.gz"],
      ["sdn", undefined, "/usr/bin/sdn-tests-ext.gz"],
    ]);
  });

  it("the local executor fetches and runs each arch's own binary", async () => {
    const ran: Record<string, Record<string, string[]>> = {};
    for (const arch of ["amd64", "arm64"] as const) {
      const plan = await resolveFor(arch, join(dir.path, `cache-${arch}`));
      const { outcome, tests } = await runLocally(
        plan,
        join(dir.path, `out-${arch}`),
        join(dir.path, "images"),
      );
      expect(outcome).toMatchObject({ status: "completed" });
      ran[arch] = tests;
    }
    // arm64's image carries the PR's binary, with its one new test; amd64's the released one.
    expect(ran.arm64!["ovn-kubernetes"]).toContain(NEW_TEST);
    expect(ran.amd64!["ovn-kubernetes"]).not.toContain(NEW_TEST);
    expect(ran.amd64!["ovn-kubernetes"]!.length).toBe(ran.arm64!["ovn-kubernetes"]!.length - 1);
    // The referrer's binary runs on both.
    expect(ran.amd64!.sdn!.length).toBeGreaterThan(0);
    expect(ran.arm64!.sdn).toEqual(ran.amd64!.sdn);
  });

  it("a `more` run reusing its parent's plan gets the binaries retention swept again", async () => {
    const plan = await resolveFor("amd64", join(dir.path, "cache-more"));
    const imagesDir = join(dir.path, "images-more");
    const first = await runLocally(plan, join(dir.path, "out-parent"), imagesDir);
    expect(first.outcome).toMatchObject({ status: "completed" });
    // Retention swept the fetched binaries and the registry cache since the parent ran.
    await rm(imagesDir, { recursive: true });
    const resolve = createPayloadPlanResolver({
      registry: await createRegistry({ cacheDir: join(dir.path, "x") }),
    });
    const resolution = await resolve({ run: runOn("amd64", { plan }), signal: AbortSignal.timeout(60_000) });
    expect(resolution).toEqual({ kind: "ready", plan });

    const again = await runLocally(plan, join(dir.path, "out-more"), imagesDir);

    expect(again.outcome).toMatchObject({ status: "completed" });
    expect(again.tests).toEqual(first.tests);
    const fetched = await readdir(join(imagesDir, "binaries"), { recursive: true });
    const ovn = fetched.find((path) => path.endsWith("ovn-kubernetes-tests-ext.gz"))!;
    expect(await readFile(join(imagesDir, "binaries", ovn))).toEqual(releasedOvn);
  });

  it("a binary whose image is gone fails the shard, naming the image", async () => {
    const plan = await resolveFor("amd64", join(dir.path, "cache-gone"));
    const [ovn] = plan.arms[0]!.components;
    const gone: ExecutionPlan = {
      ...plan,
      arms: [{ arm: "pr", components: [{ ...ovn!, image: `${front.host}/ocp/deleted@${ovn!.digest}` }] }],
    };
    const imagesDir = join(dir.path, "images-gone");

    const { outcome } = await runLocally(gone, join(dir.path, "out-gone"), imagesDir);

    expect(outcome.status).toBe("failed");
    expect(outcome.status === "failed" && outcome.reason).toContain("ocp/deleted");
    expect(await stat(join(imagesDir, "binaries")).catch(() => undefined)).toBeUndefined();
  });
});
