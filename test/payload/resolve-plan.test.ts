import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildComponentImage, buildLabels } from "@netstress/testbed/sample-payload/build-release-image.ts";
import { buildImage, buildLayer } from "@netstress/testbed/sample-payload/oci-image-builder.ts";
import { runnablePlan } from "../helpers/runnable-plan.ts";
import { resolvePlan } from "../../src/payload/resolve-plan.ts";
import { resolvedPlanSchema, type ResolvedPlan } from "../../src/payload/resolved-plan.ts";
import { createDistributionClient } from "../../src/registry/distribution-client.ts";
import { createRegistry } from "../../src/registry/create-registry.ts";
import { pushImage } from "../helpers/oci-push-image.ts";
import { pushPayload, type PayloadComponentSpec } from "../helpers/oci-push-payload.ts";
import { startRegistry, type RegistryServer } from "../helpers/start-registry.ts";

let server: RegistryServer;
let work: string;
let released: { payload: string; pullspecs: Map<string, string> };
let prPayload: string;
let prImage: string;
const PR_COMMIT = "feedface".repeat(5);

const components: PayloadComponentSpec[] = [
  { tag: "ovn-kubernetes", binary: "ovn released binary" },
  { tag: "sdn", binary: "sdn released binary" },
  { tag: "hyperkube", binary: "k8s tests", binaryPath: "/usr/bin/k8s-tests-ext.gz", arches: ["amd64"] },
  { tag: "cluster-network-operator" },
  { tag: "machine-config-operator", binary: "never pushed", unpushed: true },
  { tag: "cli" },
];

async function countingRegistry(cacheDir?: string) {
  const requests: string[] = [];
  const registry = await createRegistry({
    cacheDir: cacheDir ?? (await mkdtemp(join(work, "cache-"))),
    client: createDistributionClient({
      fetch: (input, init) => {
        requests.push(String(input));
        return fetch(input, init);
      },
    }),
  });
  return { registry, requests };
}

const byTag = (plan: ResolvedPlan) => Object.fromEntries(plan.components.map((c) => [c.tag, c]));

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "netstress-plan-"));
  server = await startRegistry();
  const common = {
    url: server.url,
    host: server.host,
    repository: "ocp/release",
    arches: ["amd64", "arm64"],
  };
  released = await pushPayload({ ...common, name: "4.20.0-0.nightly", components });
  const prBuild = components.map((c) =>
    c.tag === "ovn-kubernetes" ? { ...c, binary: "ovn PR binary", commit: PR_COMMIT } : c,
  );
  prPayload = (
    await pushPayload({ ...common, name: "4.20.0-0.ci-pr", components: prBuild, releaseTag: "pr-payload" })
  ).payload;
  const image = await buildComponentImage({
    arches: ["amd64", "arm64"],
    labels: buildLabels(PR_COMMIT, "https://github.com/openshift/ovn-kubernetes"),
    binary: { path: "/usr/bin/ovn-kubernetes-tests-ext.gz", content: Buffer.from("ovn PR binary") },
  });
  await pushImage({ url: server.url, repository: "ci/ovn-kubernetes", tag: "pr-42", image });
  prImage = `${server.host}/ci/ovn-kubernetes:pr-42`;
});

afterAll(async () => {
  await server?.stop();
  await rm(work, { recursive: true, force: true });
});

describe("plan resolution against a real registry", () => {
  it("takes the override's binary and commit, the payload's for the rest, and says what is missing", async () => {
    const { registry } = await countingRegistry();
    const plan = await resolvePlan({
      payload: released.payload,
      arch: "amd64",
      overrides: new Map([["ovn-kubernetes", prImage]]),
      registry,
    });
    expect(resolvedPlanSchema.parse(plan)).toEqual(plan);
    expect(plan.payload).toMatchObject({
      ref: released.payload,
      name: "4.20.0-0.nightly",
      digest: expect.stringMatching(/^sha256:/),
    });
    const c = byTag(plan);
    expect(c["ovn-kubernetes"]).toMatchObject({
      image: prImage,
      source: "override",
      commit: PR_COMMIT,
      available: true,
    });
    expect(c.sdn).toMatchObject({
      image: released.pullspecs.get("sdn"),
      source: "released",
      commit: "sdn-commit".padEnd(40, "0"),
      sourceLocation: "https://github.com/openshift/sdn",
      available: true,
    });
    expect(c.hyperkube).toMatchObject({ binaryPath: "/usr/bin/k8s-tests-ext.gz", available: true });
    expect(c["cluster-network-operator"]).toMatchObject({
      available: false,
      digest: expect.stringMatching(/^sha256:/),
      reason: expect.stringMatching(
        /no test binary: \/usr\/bin\/cluster-network-operator-tests-ext\.gz is not in any of the 1 layers/,
      ),
    });
    expect(c["machine-config-operator"]).toMatchObject({
      available: false,
      digest: null,
      reason: expect.stringMatching(/not found/),
    });
    expect(c.cli).toBeUndefined();
  });

  it("reports a component without an image for the arch as unavailable, naming what it offers", async () => {
    const { registry } = await countingRegistry();
    const plan = await resolvePlan({ payload: released.payload, arch: "arm64", registry });
    expect(byTag(plan).hyperkube).toMatchObject({
      available: false,
      reason: expect.stringMatching(/has no linux\/arm64 image; it offers linux\/amd64/),
    });
    expect(byTag(plan).sdn!.available).toBe(true);
  });

  it("with --baseline-payload, finds the PR's tags by their differing digests and commits", async () => {
    const { registry } = await countingRegistry();
    const plan = await resolvePlan({
      payload: prPayload,
      baselinePayload: released.payload,
      arch: "amd64",
      registry,
    });
    expect(plan.baseline?.name).toBe("4.20.0-0.nightly");
    expect(plan.components.filter((c) => c.source === "override").map((c) => [c.tag, c.commit])).toEqual([
      ["ovn-kubernetes", PR_COMMIT],
    ]);
  });

  it("refuses an image without image-references as a payload, and a wrong kind in it", async () => {
    const { registry } = await countingRegistry();
    await expect(
      resolvePlan({ payload: `${server.host}/ci/ovn-kubernetes:pr-42`, arch: "amd64", registry }),
    ).rejects.toMatchObject({
      code: "no-image-references",
      message: expect.stringMatching(
        /is not a release payload: \/release-manifests\/image-references is not in any/,
      ),
    });
    const wrongKind = await pushPayload({
      url: server.url,
      host: server.host,
      repository: "ocp/wrong",
      name: "x",
      arches: ["amd64"],
      components: [],
      document: { kind: "ConfigMap", apiVersion: "v1", data: {} },
    });
    await expect(resolvePlan({ payload: wrongKind.payload, arch: "amd64", registry })).rejects.toMatchObject({
      code: "invalid-image-references",
      message: expect.stringMatching(/expected kind ImageStream/),
    });
  });

  it("resolves a digest-pinned payload again without registry requests, but for the image that was missing", async () => {
    const cacheDir = await mkdtemp(join(work, "cache-"));
    const cold = await countingRegistry(cacheDir);
    const first = await resolvePlan({ payload: released.payload, arch: "amd64", registry: cold.registry });
    await cold.registry.settled();
    const pinned = released.payload.replace(/:release$/, `@${first.payload.digest}`);

    const warm = await countingRegistry(cacheDir);
    const again = await resolvePlan({ payload: pinned, arch: "amd64", registry: warm.registry });
    const missing = released.pullspecs.get("machine-config-operator")!.split("@")[1];
    expect(warm.requests).toEqual([`${server.url}/v2/ocp/release/manifests/${missing}`]);
    expect(again.components).toEqual(first.components);
  });

  it("fetches both arms from the cache: the PR's binary beside the released one, shared ones written once", async () => {
    const cacheDir = await mkdtemp(join(work, "cache-"));
    const { registry, requests } = await countingRegistry(cacheDir);
    const overrides = new Map([["ovn-kubernetes", prImage]]);
    const common = { payload: released.payload, arch: "amd64", registry, keepBinaries: true } as const;
    const plan = await resolvePlan({ ...common, overrides });
    const baselinePlan = await resolvePlan(common);
    const planned = requests.length;
    const execution = await runnablePlan({ plan, baselinePlan, cacheDir, registry });
    // Everything was fetched while planning; extracting takes it from the cache.
    expect(requests.length).toBe(planned);
    expect(execution.arch).toBe("amd64");
    const [pr, baseline] = execution.arms;
    expect(pr!.arm).toBe("pr");
    expect(baseline!.arm).toBe("baseline");
    const binaryOf = (arm: typeof pr, tag: string) => arm!.components.find((c) => c.component === tag)!;
    expect(await readFile(binaryOf(pr, "ovn-kubernetes").binary, "utf8")).toBe("ovn PR binary");
    expect(await readFile(binaryOf(baseline, "ovn-kubernetes").binary, "utf8")).toBe("ovn released binary");
    expect(binaryOf(pr, "ovn-kubernetes")).toMatchObject({
      source: "override",
      commit: PR_COMMIT,
      image: prImage,
    });
    expect(binaryOf(pr, "sdn").binary).toBe(binaryOf(baseline, "sdn").binary);
    expect(pr!.components.map((c) => c.component).sort()).toEqual(["hyperkube", "ovn-kubernetes", "sdn"]);
  });

  it("refuses a plan in which nothing has a binary", async () => {
    const { registry } = await countingRegistry();
    const image = buildImage({
      arch: "amd64",
      layers: [await buildLayer([{ path: "README", content: "no tests" }])],
    });
    await pushImage({ url: server.url, repository: "ci/empty", tag: "x", image });
    const plan = await resolvePlan({
      payload: released.payload,
      arch: "arm64",
      overrides: new Map([["sdn", `${server.host}/ci/empty:x`]]),
      registry,
      tagFilter: { include: ["sdn"], exclude: [] },
    });
    await expect(
      runnablePlan({ plan, cacheDir: await mkdtemp(join(work, "cache-")), registry }),
    ).rejects.toThrow(
      /the pr arm has no component with a usable arm64 test binary \(sdn: .*single-arch image for linux\/amd64, not linux\/arm64/,
    );
  });
});
