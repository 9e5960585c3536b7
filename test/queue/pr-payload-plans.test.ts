import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildComponentImage, buildLabels } from "@netstress/testbed/sample-payload/build-release-image.ts";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { resolvePlan } from "../../src/payload/resolve-plan.ts";
import { createPayloadPlanResolver } from "../../src/queue/payload-plan-resolver.ts";
import { createRegistry } from "../../src/registry/create-registry.ts";
import { armPayload } from "../../src/runs/arm-payload.ts";
import { applyRunEvent } from "../../src/runs/run-events.ts";
import { runRecord } from "../helpers/github-run-deps.ts";
import { pushImage } from "../helpers/oci-push-image.ts";
import { pushPayload } from "../helpers/oci-push-payload.ts";
import { startRegistry, type RegistryServer } from "../helpers/start-registry.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const arch = hostArch();
let server: RegistryServer;
let dir: Awaited<ReturnType<typeof tempDir>>;
let base: string;
let baseDigest: string;

beforeAll(async () => {
  dir = await tempDir("netstress-pr-payload-plans-");
  server = await startRegistry();
  ({ payload: base, digest: baseDigest } = await pushPayload({
    url: server.url,
    host: server.host,
    repository: "ocp/release",
    name: "4.20.0-0.nightly-2026-11-30-000000",
    arches: [arch],
    components: [
      { tag: "ovn-kubernetes", binary: "released ovn tests" },
      { tag: "sdn", binary: "released sdn tests" },
    ],
  }));
  const pr = await buildComponentImage({
    arches: [arch],
    labels: buildLabels("f00d".padEnd(40, "1"), "https://github.com/openshift/ovn-kubernetes"),
    binary: { path: "/usr/bin/ovn-kubernetes-tests-ext.gz", content: Buffer.from("PR ovn tests") },
  });
  await pushImage({ url: server.url, repository: "ci/ovn-kubernetes", tag: "pr-7", image: pr });
}, 120_000);
afterAll(async () => {
  await server?.stop();
  await dir?.remove();
});

const prRun = () => {
  const { source } = runRecord();
  return runRecord({
    source: {
      ...source,
      payload: base,
      tags: ["ovn-kubernetes"],
      prImage: `${server.host}/ci/{tag}:pr-{pr}`,
    },
  });
};

describe("PR runs whose clusters under test install the PR payload", () => {
  const resolver = async (wanted: boolean) => {
    const cacheDir = join(dir.path, `cache-${wanted}`);
    return createPayloadPlanResolver({
      registry: await createRegistry({ cacheDir }),
      prPayloads: { wanted: () => wanted, repository: `${server.host}/netstress/pr-payloads` },
    });
  };

  it("plan the PR arm on a payload with the PR's images, pushed by digest", async () => {
    const run = prRun();
    const resolution = await (await resolver(true))({ run, signal: AbortSignal.timeout(60_000) });

    expect(resolution.kind).toBe("ready");
    const payload = resolution.kind === "ready" ? resolution.payloads?.pr : undefined;
    expect(payload).toMatch(new RegExp(`^${server.host}/netstress/pr-payloads@sha256:[0-9a-f]{64}$`));
    // The PR arm's clusters get it; the baseline arm's keep the released payload.
    if (resolution.kind !== "ready") return;
    const planned = applyRunEvent(
      run,
      { type: "planned", plan: resolution.plan, payloads: { pr: payload! } },
      new Date(),
    )!;
    expect(armPayload(planned, "pr")).toBe(payload);
    expect(armPayload(planned, "baseline")).toBe(base);
    // Against the released payload, the PR payload overrides exactly the PR's tag.
    const registry = await createRegistry({ cacheDir: join(dir.path, "check") });
    const plan = await resolvePlan({ payload: payload!, baselinePayload: base, arch, registry });
    expect(plan.components.filter((c) => c.source === "override").map((c) => c.tag)).toEqual([
      "ovn-kubernetes",
    ]);
  });

  it("assemble nothing while runs get no clusters under test", async () => {
    const resolution = await (await resolver(false))({ run: prRun(), signal: AbortSignal.timeout(60_000) });
    expect(resolution).toMatchObject({ kind: "ready" });
    // Both arms' clusters would run the released payload, by the digest its tag named.
    const released = `${server.host}/ocp/release@${baseDigest}`;
    expect(resolution.kind === "ready" && resolution.payloads).toMatchObject({
      pr: released,
      baseline: released,
    });
  });
});
