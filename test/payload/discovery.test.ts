import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildLabels, buildReleaseImage } from "@netstress/testbed/sample-payload/build-release-image.ts";
import {
  buildImage,
  buildIndex,
  buildLayer,
  type Blob,
  type ImageBundle,
  type LayerEntry,
} from "@netstress/testbed/sample-payload/oci-image-builder.ts";
import { loadExtensionImageStreams } from "../../src/payload/extension-image-streams.ts";
import { runnablePlan } from "../helpers/runnable-plan.ts";
import { resolvePlan, type ResolvePlanOptions } from "../../src/payload/resolve-plan.ts";
import { resolvedPlanSchema, type ResolvedPlan } from "../../src/payload/resolved-plan.ts";
import { createDistributionClient } from "../../src/registry/distribution-client.ts";
import { createRegistry } from "../../src/registry/create-registry.ts";
import { pushImage } from "../helpers/oci-push-image.ts";
import { pushReferrer } from "../helpers/oci-push-referrer.ts";
import { startReferrersFront, type ReferrersFront } from "../helpers/referrers-front.ts";
import { startRegistry, type RegistryServer } from "../helpers/start-registry.ts";

const ARTIFACT = "application/vnd.openshift.tests-extension.v1+gzip";
const REPO = "ocp/release";
let server: RegistryServer;
let front: ReferrersFront;
let work: string;
let payload: string;
let payloadDigest: string;
/** Layer digests of the image whose binary is in the top of its three layers. */
let deepLayers: { top: string; lower: string[] };
let referredIndex: Blob;

const dir = (path: string): LayerEntry[] => [
  { path: "usr/", type: "directory" },
  { path: "usr/bin/", type: "directory" },
  { path, content: `binary at ${path}` },
];

/** A component: per arch the same layers (bottom first); pushed unless `unpushed`. */
async function component(
  tag: string,
  layers: LayerEntry[][],
  options: { unpushed?: boolean; arches?: string[]; repository?: string } = {},
): Promise<{ pullspec: string; image: ImageBundle }> {
  const built = await Promise.all(layers.map((entries) => buildLayer(entries)));
  const labels = buildLabels(`${tag}-commit`.padEnd(40, "0"), `https://github.com/openshift/${tag}`);
  const image = buildIndex(
    (options.arches ?? ["amd64", "arm64"]).map((arch) => buildImage({ arch, layers: built, labels })),
  );
  const repository = options.repository ?? REPO;
  if (!options.unpushed) await pushImage({ url: server.url, repository, tag: `component-${tag}`, image });
  return { pullspec: `${server.host}/${repository}@${image.manifest.digest}`, image };
}

/** A registry client that counts (and, for the front, redirects) its requests, with a cache directory. */
async function countingRegistry(options: { cacheDir?: string; viaFront?: boolean; now?: () => number } = {}) {
  const requests: string[] = [];
  const registry = await createRegistry({
    cacheDir: options.cacheDir ?? (await mkdtemp(join(work, "cache-"))),
    ...(options.now ? { now: options.now } : {}),
    client: createDistributionClient({
      fetch: (input, init) => {
        const url = options.viaFront ? String(input).replace(server.url, front.url) : String(input);
        requests.push(url);
        return fetch(url, init);
      },
    }),
  });
  return { registry, requests };
}

const byTag = (plan: ResolvedPlan) => Object.fromEntries(plan.components.map((c) => [c.tag, c]));
const plan = (options: Partial<ResolvePlanOptions> & Pick<ResolvePlanOptions, "registry">) =>
  resolvePlan({ payload, arch: "amd64", ...options });

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "netstress-discovery-"));
  server = await startRegistry();
  front = await startReferrersFront({ upstream: server.url, pageSize: 1 });
  const base: LayerEntry[] = [{ path: "etc/os-release", content: "base" }];
  const tags: Record<string, string> = {};
  const add = async (tag: string, layers: LayerEntry[][], options?: { unpushed?: boolean }) => {
    const built = await component(tag, layers, options);
    tags[tag] = built.pullspec;
    return built.image;
  };
  // Listed in origin's table, at the conventional path.
  await add("ovn-kubernetes", [base, dir("usr/bin/ovn-kubernetes-tests-ext.gz")]);
  // No table lists it: found at the convention.
  await add("team-unlisted", [base, dir("usr/bin/team-unlisted-tests-ext.gz")]);
  // A listed tag and an unlisted one whose binary an upper layer deletes.
  for (const tag of ["cluster-network-operator", "whited-out"]) {
    await add(tag, [base, dir(`usr/bin/${tag}-tests-ext.gz`), [{ path: `usr/bin/.wh.${tag}-tests-ext.gz` }]]);
  }
  // The binary in the top of three layers: only that layer is read.
  const deep = await add("deep", [
    base,
    [{ path: "opt/filler", content: "x".repeat(4096) }],
    dir("usr/bin/deep-tests-ext.gz"),
  ]);
  const deepManifest = JSON.parse(deep.children[0]!.bytes.toString("utf8")) as {
    layers: Array<{ digest: string }>;
  };
  deepLayers = {
    top: deepManifest.layers[2]!.digest,
    lower: deepManifest.layers.slice(0, 2).map((l) => l.digest),
  };
  // The binary ships as a referrer of the index (as the pullspec names it), beside an unrelated artifact.
  const referred = await add("referred", [base]);
  referredIndex = referred.manifest;
  await pushReferrer({
    url: server.url,
    repository: REPO,
    subject: referred.manifest,
    artifactType: "application/vnd.example.sbom.v1+json",
    title: "referred-tests-ext.gz",
    content: Buffer.from("{}"),
    layerMediaType: "application/json",
  });
  await pushReferrer({
    url: server.url,
    repository: REPO,
    subject: referred.manifest,
    artifactType: ARTIFACT,
    title: "referred-tests-ext.gz",
    content: Buffer.from("referred binary"),
  });
  // A referrer of the amd64 manifest inside an index: not what the pullspec names, so not its binary.
  const perArch = await add("per-arch", [base]);
  await pushReferrer({
    url: server.url,
    repository: REPO,
    subject: perArch.children[0]!,
    artifactType: ARTIFACT,
    title: "per-arch-tests-ext.gz",
    content: Buffer.from("amd64 binary"),
  });
  // A single-arch image: the referrer's subject is the image itself.
  const single = buildImage({
    arch: "amd64",
    layers: [await buildLayer(base)],
    labels: buildLabels("single-arch-commit".padEnd(40, "0"), "https://github.com/openshift/single-arch"),
  });
  await pushImage({ url: server.url, repository: REPO, tag: "component-single-arch", image: single });
  tags["single-arch"] = `${server.host}/${REPO}@${single.manifest.digest}`;
  await pushReferrer({
    url: server.url,
    repository: REPO,
    subject: single.manifest,
    artifactType: ARTIFACT,
    title: "single-arch-tests-ext.gz",
    content: Buffer.from("single-arch binary"),
  });
  // Two referrers claim the same file: which one runs cannot be told.
  const twice = await add("twice", [base]);
  for (const content of ["one", "two"]) {
    await pushReferrer({
      url: server.url,
      repository: REPO,
      subject: twice.manifest,
      artifactType: ARTIFACT,
      title: "twice-tests-ext.gz",
      content: Buffer.from(content),
    });
  }
  // At the path a version-specific table entry gives.
  await add("versioned", [
    base,
    [
      { path: "opt/", type: "directory" },
      { path: "opt/versioned-ext.gz", content: "v" },
    ],
  ]);
  await add("cli", [base]);
  await add("broken", [base, dir("usr/bin/broken-tests-ext.gz")], { unpushed: true });

  const release = await buildReleaseImage({
    name: "4.21.0-0.nightly-2026-11-30-000000",
    arches: ["amd64", "arm64"],
    tags: Object.entries(tags).map(([tag, pullspec]) => ({
      tag,
      pullspec,
      commit: `${tag}-commit`.padEnd(40, "0"),
      sourceLocation: `https://github.com/openshift/${tag}`,
    })),
  });
  await pushImage({ url: server.url, repository: REPO, tag: "release", image: release });
  payload = `${server.host}/${REPO}:release`;
  payloadDigest = release.manifest.digest;
});

afterAll(async () => {
  await front?.stop();
  await server?.stop();
  await rm(work, { recursive: true, force: true });
});

describe("discovery against a real docker-registry (no referrers API: the sha256- tag fallback)", () => {
  it("finds binaries by table, convention and referrer, and reports what cannot be read", async () => {
    const { registry, requests } = await countingRegistry();
    const resolved = await plan({ registry });
    expect(resolvedPlanSchema.parse(resolved)).toEqual(resolved);
    const c = byTag(resolved);
    expect(Object.keys(c).sort()).toEqual([
      "broken",
      "cluster-network-operator",
      "deep",
      "ovn-kubernetes",
      "referred",
      "single-arch",
      "team-unlisted",
      "twice",
    ]);
    expect(c["ovn-kubernetes"]).toMatchObject({ discoveredBy: "table", available: true });
    expect(c["team-unlisted"]).toMatchObject({
      discoveredBy: "convention",
      binaryPath: "/usr/bin/team-unlisted-tests-ext.gz",
      available: true,
      commit: "team-unlisted-commit".padEnd(40, "0"),
    });
    expect(c.referred).toMatchObject({
      discoveredBy: "referrer",
      binaryPath: "/usr/bin/referred-tests-ext.gz",
      referrer: expect.stringMatching(/^sha256:/),
      available: true,
    });
    expect(c["single-arch"]).toMatchObject({ discoveredBy: "referrer", available: true });
    expect(c["per-arch"]).toBeUndefined();
    // A listed tag whose binary is deleted says so; an unlisted one is simply not a test component.
    expect(c["cluster-network-operator"]).toMatchObject({
      discoveredBy: "table",
      available: false,
      reason: expect.stringMatching(
        /no test binary: \/usr\/bin\/cluster-network-operator-tests-ext\.gz was deleted by usr\/bin\/\.wh\.cluster-network-operator-tests-ext\.gz/,
      ),
    });
    expect(c["whited-out"]).toBeUndefined();
    expect(c.cli).toBeUndefined();
    expect(c.broken).toMatchObject({
      available: false,
      digest: null,
      reason: expect.stringMatching(/not found/),
    });
    expect(c.twice).toMatchObject({
      available: false,
      reason: expect.stringMatching(
        /2 application\/vnd\.openshift\.tests-extension\.v1\+gzip referrers .* titled twice-tests-ext\.gz .*expected one/,
      ),
    });
    // distribution 2.x has no referrers API: asked once, then the tag schema for every subject.
    expect(requests.filter((r) => r.includes("/referrers/"))).toHaveLength(1);
    expect(requests.filter((r) => /\/manifests\/sha256-/.test(r)).length).toBeGreaterThan(10);
  });

  it("reads only the layers above the binary: the top one, when it is there", async () => {
    const { registry, requests } = await countingRegistry();
    await plan({ registry, tagFilter: { include: ["deep"], exclude: [] } });
    const blobs = requests.filter((r) => r.includes("/blobs/"));
    expect(blobs.some((r) => r.endsWith(deepLayers.top))).toBe(true);
    expect(blobs.filter((r) => deepLayers.lower.some((d) => r.endsWith(d)))).toEqual([]);
  });

  it("reports a single-arch component on another arch with why, and finds index referrers for every arch", async () => {
    const { registry } = await countingRegistry();
    const arm = byTag(await plan({ registry, arch: "arm64" }));
    expect(arm["single-arch"]).toMatchObject({
      available: false,
      reason: expect.stringMatching(/single-arch image for linux\/amd64, not linux\/arm64/),
    });
    expect(arm.referred).toMatchObject({ discoveredBy: "referrer", available: true });
  });

  it("filters tags as EXTENSION_BINARY_OVERRIDE_INCLUDE_TAGS / _EXCLUDE_TAGS do: include wins", async () => {
    const { registry } = await countingRegistry();
    const included = await plan({
      registry,
      tagFilter: { include: ["team-unlisted", "cli"], exclude: ["team-unlisted"] },
    });
    expect(included.components.map((c) => c.tag)).toEqual(["team-unlisted"]);
    const excluded = await plan({
      registry,
      tagFilter: { include: [], exclude: ["team-unlisted", "ovn-kubernetes", "broken", "twice"] },
    });
    expect(excluded.components.map((c) => c.tag).sort()).toEqual([
      "cluster-network-operator",
      "deep",
      "referred",
      "single-arch",
    ]);
  });

  it("takes a listed tag's path from the table entry for the payload's release version", async () => {
    const { registry } = await countingRegistry();
    const testBinaries = {
      defaultPath: "/usr/bin/{tag}-tests-ext.gz",
      components: [{ tag: "ovn-kubernetes" }],
      versions: [
        { versions: ["4.20"], components: [{ tag: "versioned", path: "/elsewhere.gz" }], remove: [] },
        { versions: ["4.21"], components: [{ tag: "versioned", path: "/opt/versioned-ext.gz" }], remove: [] },
      ],
    };
    const c = byTag(await plan({ registry, testBinaries }));
    expect(c.versioned).toMatchObject({
      discoveredBy: "table",
      binaryPath: "/opt/versioned-ext.gz",
      available: true,
    });
  });

  it("fetches a referrer's binary from the artifact layer", async () => {
    const cacheDir = await mkdtemp(join(work, "cache-"));
    const { registry } = await countingRegistry({ cacheDir });
    const resolved = await plan({
      registry,
      keepBinaries: true,
      tagFilter: { include: ["referred", "team-unlisted"], exclude: [] },
    });
    const execution = await runnablePlan({ plan: resolved, cacheDir, registry });
    const binaries = Object.fromEntries(execution.arms[0]!.components.map((c) => [c.component, c.binary]));
    expect(await readFile(binaries.referred!, "utf8")).toBe("referred binary");
    expect(binaries.referred).toMatch(/\/referred-tests-ext\.gz$/);
    expect(await readFile(binaries["team-unlisted"]!, "utf8")).toBe(
      "binary at usr/bin/team-unlisted-tests-ext.gz",
    );
  });

  it("discovers again from the cache without a request but for the missing image; referrer lists are asked again once stale", async () => {
    const cacheDir = await mkdtemp(join(work, "cache-"));
    let now = 1_000_000;
    const cold = await countingRegistry({ cacheDir, now: () => now });
    const first = await plan({ registry: cold.registry });
    await cold.registry.settled();
    const pinned = `${server.host}/${REPO}@${payloadDigest}`;
    const missing = first.components.find((c) => c.tag === "broken")!.image.split("@")[1];

    const warm = await countingRegistry({ cacheDir, now: () => now });
    const again = await plan({ registry: warm.registry, payload: pinned });
    expect(warm.requests).toEqual([`${server.url}/v2/${REPO}/manifests/${missing}`]);
    expect(again.components).toEqual(first.components);

    now += 2 * 60 * 60_000;
    const stale = await countingRegistry({ cacheDir, now: () => now });
    const later = await plan({ registry: stale.registry, payload: pinned });
    expect(later.components).toEqual(first.components);
    const other = stale.requests.filter((r) => !r.endsWith(missing!));
    expect(other.length).toBeGreaterThan(0);
    expect(other.every((r) => /\/referrers\/|\/manifests\/sha256-/.test(r))).toBe(true);
  });
});

describe("discovery through the referrers API", () => {
  it("lists referrers page by page from the API and never asks for the sha256- tag", async () => {
    const { registry, requests } = await countingRegistry({ viaFront: true });
    const c = byTag(
      await plan({ registry, tagFilter: { include: ["referred", "team-unlisted"], exclude: [] } }),
    );
    expect(c.referred).toMatchObject({ discoveredBy: "referrer", available: true });
    expect(c["team-unlisted"]).toMatchObject({ discoveredBy: "convention" });
    expect(requests.some((r) => /\/manifests\/sha256-/.test(r))).toBe(false);
    const subject = referredIndex.digest;
    expect(front.requests).toContain(`/v2/${REPO}/referrers/${subject}`);
    // Two referrers, one a page: the second page was followed.
    expect(front.requests).toContain(`/v2/${REPO}/referrers/${subject}?page=1`);
  });
});

describe("non-payload extensions from ImageStream tags", () => {
  it("probes the image an annotated tag names, with the arguments of its binary annotation", async () => {
    const ext = await component(
      "capi",
      [[{ path: "cluster-api-actuator-pkg-tests-ext.gz", content: "capi" }]],
      {
        repository: "ext/capi",
      },
    );
    const file = join(work, "imagestreams.yaml");
    await writeFile(
      file,
      [
        "kind: List",
        "apiVersion: v1",
        "items:",
        "  - apiVersion: image.openshift.io/v1",
        "    kind: ImageStream",
        "    metadata: { name: cluster-api-actuator-pkg-tests, namespace: test-extensions }",
        "    spec:",
        "      tags:",
        "        - name: latest",
        "          annotations:",
        "            testextension.redhat.io/component: cluster-api-actuator-pkg",
        '            testextension.redhat.io/binary: "/cluster-api-actuator-pkg-tests-ext.gz --provider=aws"',
        `          from: { kind: DockerImage, name: "${ext.pullspec}" }`,
        "        - name: plain",
        `          from: { kind: DockerImage, name: "${ext.pullspec}" }`,
        "",
      ].join("\n"),
    );
    const extensions = await loadExtensionImageStreams(file);
    const { registry } = await countingRegistry();
    const c = byTag(await plan({ registry, extensions, tagFilter: { include: ["cli"], exclude: [] } }));
    expect(Object.keys(c)).toEqual(["cluster-api-actuator-pkg"]);
    expect(c["cluster-api-actuator-pkg"]).toEqual({
      tag: "cluster-api-actuator-pkg",
      image: ext.pullspec,
      digest: expect.stringMatching(/^sha256:/),
      binaryPath: "/cluster-api-actuator-pkg-tests-ext.gz",
      source: "released",
      commit: "capi-commit".padEnd(40, "0"),
      sourceLocation: "https://github.com/openshift/capi",
      available: true,
      discoveredBy: "imagestream",
      imageStreamTag: "test-extensions/cluster-api-actuator-pkg-tests:latest",
      binaryArgs: ["--provider=aws"],
    });
  });

  it("refuses an annotated tag without a binary path, and an extension named like a payload tag", async () => {
    const file = join(work, "bad.yaml");
    await writeFile(
      file,
      "kind: ImageStream\nmetadata: { name: x, namespace: ns }\nspec:\n  tags:\n  - name: latest\n    annotations: { testextension.redhat.io/component: x }\n    from: { kind: DockerImage, name: quay.io/org/x:latest }\n",
    );
    await expect(loadExtensionImageStreams(file)).rejects.toThrow(
      /ns\/x:latest: testextension\.redhat\.io\/component is set but testextension\.redhat\.io\/binary .* is not/,
    );
    const { registry } = await countingRegistry();
    await expect(
      plan({
        registry,
        extensions: [
          {
            component: "cli",
            imageStreamTag: "ns/x:latest",
            pullspec: "quay.io/org/x:1",
            binaryPath: "/x.gz",
            binaryArgs: [],
          },
        ],
      }),
    ).rejects.toThrow(/ns\/x:latest names component cli, which is a payload tag/);
  });
});
