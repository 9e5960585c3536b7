import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildComponentImage, buildLabels } from "@netstress/testbed/sample-payload/build-release-image.ts";
import type { Arch } from "@netstress/core/arch/arch.ts";
import { assemblePrPayload, type PrPayload } from "../../src/payload/assemble-pr-payload.ts";
import { preparePrPayload } from "../../src/payload/prepare-pr-payload.ts";
import { resolvedPlanSchema } from "../../src/payload/resolved-plan.ts";
import { createRegistry, type Registry } from "../../src/registry/create-registry.ts";
import { sha256Digest } from "../../src/registry/digest.ts";
import { createDistributionClient } from "../../src/registry/distribution-client.ts";
import { parseImageReference, type RegistryImageReference } from "../../src/registry/image-reference.ts";
import { parseManifest, type ImageManifest } from "../../src/registry/manifest.ts";
import { freePort } from "../helpers/free-port.ts";
import { pushImage } from "../helpers/oci-push-image.ts";
import { pushPayload } from "../helpers/oci-push-payload.ts";
import { startRegistry, type RegistryServer } from "../helpers/start-registry.ts";
import { runNetstress } from "../helpers/run-netstress.ts";

const DAEMONSET = "0000_70_cluster-network-operator_03_daemonset.yaml";
const UNRELATED = "0000_50_cluster-dns-operator_00_namespace.yaml";
const PR_COMMIT = "f00dfeed".padEnd(40, "1");

let work: string;
let server: RegistryServer;
let other: RegistryServer;
/** The base payloads: multi-arch (an index) and amd64 only (a single image). */
let multi: { payload: string; pullspecs: Map<string, string> };
let single: { payload: string };
/** The PR's ovn-kubernetes image (amd64 and arm64) and one built for amd64 alone. */
let prImage: string;
let prImageAmd64Only: string;

async function freshRegistry(): Promise<Registry> {
  return createRegistry({ cacheDir: await mkdtemp(join(work, "cache-")) });
}

/** A client over a fetch that records the method and path (with query) of every request. */
function recordingClient(options: { retries?: number } = {}) {
  const requests: string[] = [];
  const client = createDistributionClient({
    fetch: (input, init) => {
      const url = new URL(String(input));
      requests.push(`${init?.method ?? "GET"} ${url.pathname}${url.search}`);
      return fetch(input, init);
    },
    retry: { retries: options.retries ?? 1, backoffMs: 5 },
  });
  return { client, requests };
}

const daemonset = (ovn: string) =>
  `apiVersion: apps/v1\nkind: DaemonSet\nspec:\n  template:\n    spec:\n      containers:\n      - name: ovnkube\n        image: ${ovn}\n      - name: sidecar\n        image: ${ovn}\n`;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "netstress-pr-payload-"));
  [server, other] = await Promise.all([startRegistry(), startRegistry()]);
  const components = [
    { tag: "ovn-kubernetes", binary: "released ovn tests" },
    { tag: "sdn", binary: "released sdn tests" },
    { tag: "cli" },
  ];
  const manifests = (pullspecs: ReadonlyMap<string, string>) => ({
    [DAEMONSET]: daemonset(pullspecs.get("ovn-kubernetes")!),
    [UNRELATED]: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: openshift-dns-operator\n",
  });
  multi = await pushPayload({
    url: server.url,
    host: server.host,
    repository: "ocp/release",
    name: "4.20.0-0.nightly-2025-01-01-000000",
    arches: ["amd64", "arm64"],
    components,
    releaseTag: "4.20-multi",
    manifests,
  });
  const amd64 = await pushPayload({
    url: server.url,
    host: server.host,
    repository: "ocp/release-amd64",
    name: "4.20.0-0.nightly-2025-01-01-000000",
    arches: ["amd64"],
    components,
    releaseTag: "4.20",
    manifests,
  });
  // A single-arch release: the index's one image, pushed under a tag of its own.
  const top = await createDistributionClient().getManifest(
    parseImageReference(amd64.payload) as RegistryImageReference,
  );
  const [child] = (
    parseManifest({ bytes: top.bytes, mediaType: top.mediaType, what: "t" }) as {
      manifests: { digest: string }[];
    }
  ).manifests;
  single = { payload: `${server.host}/ocp/release-amd64@${child!.digest}` };

  const labels = buildLabels(PR_COMMIT, "https://github.com/openshift/ovn-kubernetes");
  const binary = { path: "/usr/bin/ovn-kubernetes-tests-ext.gz", content: Buffer.from("PR ovn tests") };
  const pr = await buildComponentImage({ arches: ["amd64", "arm64"], labels, binary });
  await pushImage({ url: server.url, repository: "ci/ovn-kubernetes", tag: "pr42", image: pr });
  prImage = `${server.host}/ci/ovn-kubernetes:pr42`;
  const prAmd64 = await buildComponentImage({ arches: ["amd64"], labels, binary });
  await pushImage({ url: server.url, repository: "ci/ovn-kubernetes", tag: "pr42-amd64", image: prAmd64 });
  prImageAmd64Only = `${server.host}/ci/ovn-kubernetes:pr42-amd64`;
}, 120_000);

afterAll(async () => {
  await Promise.all([server?.stop(), other?.stop()]);
  await rm(work, { recursive: true, force: true });
});

/** Every file of an image's release-manifests/ the tests look at, for an arch. */
async function releaseFiles(registry: Registry, reference: string, arch: Arch) {
  const image = await registry.resolveImage({ reference, arch });
  const read = async (path: string) => {
    const found = await registry.findFile({ image, path });
    if (!found.found) throw new Error(found.reason);
    return readFile(found.path);
  };
  return {
    image,
    imageReferences: JSON.parse((await read("/release-manifests/image-references")).toString()) as {
      spec: { tags: Array<{ name: string; from: { name: string }; annotations: Record<string, string> }> };
    },
    daemonset: await read(`/release-manifests/${DAEMONSET}`),
    unrelated: await read(`/release-manifests/${UNRELATED}`),
    metadata: await read("/release-manifests/release-metadata"),
  };
}

/** Reads a blob and checks it hashes to its digest and has its size. */
async function verifiedBlob(repository: string, descriptor: { digest: string; size: number }) {
  const response = await fetch(`${server.url}/v2/${repository}/blobs/${descriptor.digest}`);
  const bytes = Buffer.from(await response.arrayBuffer());
  expect(sha256Digest(bytes)).toBe(descriptor.digest);
  expect(bytes.length).toBe(descriptor.size);
  return bytes;
}

describe("assembling a PR payload against a real registry", () => {
  it("gives an index of per-arch images whose manifests name the PR image for its tag, all else unchanged and every digest verified", async () => {
    const registry = await freshRegistry();
    const { client, requests } = recordingClient();
    const overrides = new Map([["ovn-kubernetes", prImage]]);
    const assembled = await assemblePrPayload({
      base: multi.payload,
      overrides,
      targetRepository: `${server.host}/ci/pr-payloads`,
      registry,
      client,
    });
    const prIndexDigest = (await registry.resolveImage({ reference: prImage, arch: "amd64" })).indexDigest!;
    const prPinned = `${server.host}/ci/ovn-kubernetes@${prIndexDigest}`;
    expect(assembled.pullspec).toBe(`${server.host}/ci/pr-payloads@${assembled.digest}`);
    expect(assembled.images).toEqual({ "ovn-kubernetes": prPinned });

    // An index over one image per arch, each the base's layers plus one.
    const index = await client.getManifest(parseImageReference(assembled.pullspec) as RegistryImageReference);
    expect(index.digest).toBe(assembled.digest);
    const top = parseManifest({ bytes: index.bytes, what: "assembled" });
    const entries = top.kind === "index" ? top.manifests : [];
    expect(entries.map((e) => e.platform?.architecture)).toEqual(["amd64", "arm64"]);
    expect(Object.fromEntries(entries.map((e) => [e.platform?.architecture, e.digest]))).toEqual(
      assembled.perArch,
    );

    for (const arch of ["amd64", "arm64"] as const) {
      const base = await releaseFiles(registry, multi.payload, arch);
      const pr = await releaseFiles(registry, assembled.pullspec, arch);
      // image-references: the PR's tag names the PR's image and commit; nothing else changed.
      const expected = structuredClone(base.imageReferences);
      const ovn = expected.spec.tags.find((t) => t.name === "ovn-kubernetes")!;
      ovn.from.name = prPinned;
      ovn.annotations["io.openshift.build.commit.id"] = PR_COMMIT;
      expect(pr.imageReferences).toEqual(expected);
      expect(pr.imageReferences).not.toEqual(base.imageReferences);
      // The manifest naming the replaced pullspec names the new one, byte for byte; others are the base's bytes.
      expect(pr.daemonset.toString()).toBe(
        base.daemonset.toString().replaceAll(multi.pullspecs.get("ovn-kubernetes")!, prPinned),
      );
      expect(pr.daemonset.toString()).toContain(prPinned);
      expect(pr.unrelated).toEqual(base.unrelated);
      expect(pr.metadata).toEqual(base.metadata);

      // Digests verify: the manifest as the index names it, its config and every layer.
      const entry = entries.find((e) => e.platform?.architecture === arch)!;
      const manifest = parseManifest({
        bytes: await verifiedManifest("ci/pr-payloads", entry),
        what: "per-arch",
      }) as ImageManifest;
      const config = JSON.parse((await verifiedBlob("ci/pr-payloads", manifest.config)).toString()) as {
        architecture: string;
        rootfs: { diff_ids: string[] };
      };
      expect(config.architecture).toBe(arch);
      expect(config.rootfs.diff_ids).toHaveLength(manifest.layers.length);
      for (const layer of manifest.layers) await verifiedBlob("ci/pr-payloads", layer);
      expect(manifest.layers.slice(0, -1).map((l) => l.digest)).toEqual(
        base.image.manifest.layers.map((l) => l.digest),
      );
    }

    // Base and target share the registry: every base layer was mounted, none sent.
    const baseLayers = new Set(
      (
        await Promise.all(
          (["amd64", "arm64"] as const).map(async (arch) =>
            (await registry.resolveImage({ reference: multi.payload, arch })).manifest.layers.map(
              (l) => l.digest,
            ),
          ),
        )
      ).flat(),
    );
    const mounts = requests.filter((r) => r.startsWith("POST ") && r.includes("mount="));
    const uploads = requests.filter((r) => r.startsWith("PUT ") && r.includes("/blobs/uploads/"));
    const uploaded = uploads.map((r) => decodeURIComponent(/digest=([^&]+)/.exec(r)![1]!));
    expect(mounts.length).toBeGreaterThanOrEqual(baseLayers.size);
    expect(mounts.every((r) => r.includes("from=ocp%2Frelease"))).toBe(true);
    expect(uploaded.filter((d) => baseLayers.has(d))).toEqual([]);
    expect(requests.filter((r) => r.startsWith("PATCH "))).toEqual([]);
    // What was sent: per arch a new layer and a config (the release layer is shared by the arches, so equal).
    expect(new Set(uploaded).size).toBeGreaterThanOrEqual(2);
    expect(new Set(uploaded).size).toBeLessThanOrEqual(4);

    // The same inputs assemble the same payload.
    const again = await assemblePrPayload({
      base: multi.payload,
      overrides,
      targetRepository: `${server.host}/ci/pr-payloads`,
      registry,
      client,
    });
    expect(again.digest).toBe(assembled.digest);
  });

  it("copies the base's layers to a target on another registry, and a single-arch base gives a single image", async () => {
    const registry = await freshRegistry();
    const { client, requests } = recordingClient();
    const assembled = await assemblePrPayload({
      base: single.payload,
      overrides: new Map([["ovn-kubernetes", prImage]]),
      targetRepository: `${other.host}/pr/payloads`,
      registry,
      client,
      tag: "pr42",
    });
    expect(Object.keys(assembled.perArch)).toEqual(["amd64"]);
    expect(assembled.perArch.amd64).toBe(assembled.digest);
    expect(requests.some((r) => r.includes("mount="))).toBe(false);
    const pr = await releaseFiles(registry, `${other.host}/pr/payloads:pr42`, "amd64");
    expect(pr.image.digest).toBe(assembled.digest);
    expect(pr.imageReferences.spec.tags.find((t) => t.name === "ovn-kubernetes")!.from.name).toBe(
      assembled.images["ovn-kubernetes"],
    );
  });

  it("`netstress payload assemble` gives a payload on which `netstress plan` infers exactly the PR's tags as overrides", async () => {
    const cacheDir = await mkdtemp(join(work, "cli-cache-"));
    const made = await runNetstress([
      "payload",
      "assemble",
      "--from-release",
      multi.payload,
      "--to",
      `${server.host}/ci/pr-payloads`,
      "--cache-dir",
      cacheDir,
      "-o",
      "json",
      `ovn-kubernetes=${prImage}`,
    ]);
    expect(made.stderr).toBe("");
    expect(made.code).toBe(0);
    const assembled = JSON.parse(made.stdout) as PrPayload;
    const { code, stdout, stderr } = await runNetstress([
      "plan",
      "--payload",
      assembled.pullspec,
      "--baseline-payload",
      multi.payload,
      "--arch",
      "arm64",
      "--cache-dir",
      await mkdtemp(join(work, "cli-cache-")),
      "-o",
      "json",
    ]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const plan = resolvedPlanSchema.parse(JSON.parse(stdout));
    expect(plan.components.filter((c) => c.source === "override").map((c) => c.tag)).toEqual([
      "ovn-kubernetes",
    ]);
    expect(plan.components.find((c) => c.tag === "ovn-kubernetes")).toMatchObject({
      image: assembled.images["ovn-kubernetes"],
      commit: PR_COMMIT,
      available: true,
    });
    expect(plan.components.find((c) => c.tag === "sdn")).toMatchObject({
      source: "released",
      available: true,
    });
  }, 60_000);
});

describe("a PR payload that cannot be assembled or used", () => {
  const assemble = async (overrides: Map<string, string>, targetRepository: string, retries = 1) =>
    assemblePrPayload({
      base: multi.payload,
      overrides,
      targetRepository,
      registry: await freshRegistry(),
      client: recordingClient({ retries }).client,
    });

  it("`netstress payload assemble` says what is wrong in one line and exits 2", async () => {
    const result = await runNetstress([
      "payload",
      "assemble",
      "--from-release",
      multi.payload,
      "--to",
      `${server.host}/ci/pr-payloads`,
      "--cache-dir",
      await mkdtemp(join(work, "cli-cache-")),
      "ovn-kubernetes",
    ]);
    expect(result).toMatchObject({
      code: 2,
      stdout: "",
      stderr:
        'netstress: TAG=IMAGE expects TAG=PULLSPEC (e.g. ovn-kubernetes=quay.io/org/ovn@sha256:…), got "ovn-kubernetes"\n',
    });
  });

  it("refuses a tag the base does not have, naming the tags it has, before writing anything", async () => {
    const { client, requests } = recordingClient();
    await expect(
      assemblePrPayload({
        base: multi.payload,
        overrides: new Map([["ovn-kubrnetes", prImage]]),
        targetRepository: `${server.host}/ci/untouched`,
        registry: await freshRegistry(),
        client,
      }),
    ).rejects.toMatchObject({
      code: "unknown-tag",
      message: expect.stringMatching(/has no tag ovn-kubrnetes; its 3 tags are cli, ovn-kubernetes, sdn/),
    });
    expect(requests.filter((r) => r.includes("/ci/untouched/"))).toEqual([]);
  });

  it("says the PR image lacks an arch the base has", async () => {
    await expect(
      assemble(new Map([["ovn-kubernetes", prImageAmd64Only]]), `${server.host}/ci/pr-payloads`),
    ).rejects.toThrow(/has no linux\/arm64 image; it offers linux\/amd64/);
  });

  it("says the target repository cannot be reached", async () => {
    const port = await freePort();
    await expect(
      assemble(new Map([["ovn-kubernetes", prImage]]), `127.0.0.1:${port}/ci/pr-payloads`, 0),
    ).rejects.toThrow(
      new RegExp(`push of blob sha256:[0-9a-f]+ to 127\\.0\\.0\\.1:${port}/ci/pr-payloads: cannot reach`),
    );
  });

  it("says pushes to the target are denied", async () => {
    const readOnly = await startRegistry({ readOnly: true });
    try {
      await expect(
        assemble(new Map([["ovn-kubernetes", prImage]]), `${readOnly.host}/ci/pr-payloads`),
      ).rejects.toThrow(/does not accept pushes \(405 Method Not Allowed/);
    } finally {
      await readOnly.stop();
    }
  });

  it("refuses a target repository with a tag, and a base that is an OCI layout", async () => {
    await expect(
      assemble(new Map([["ovn-kubernetes", prImage]]), `${server.host}/ci/pr-payloads:latest`),
    ).rejects.toThrow(/names a tag or digest; give the repository alone/);
    await expect(
      assemblePrPayload({
        base: "oci:/tmp/somewhere:release",
        overrides: new Map([["ovn-kubernetes", prImage]]),
        targetRepository: `${server.host}/ci/pr-payloads`,
        registry: await freshRegistry(),
        client: recordingClient().client,
      }),
    ).rejects.toThrow(/is an OCI layout; a PR payload is assembled from and pushed to registries/);
  });
});

describe("preparePrPayload with the repository's pr_payload", () => {
  const prepare = async (prPayload: string | undefined, targetRepository?: string) =>
    preparePrPayload({
      base: multi.payload,
      overrides: new Map([["ovn-kubernetes", prImage]]),
      arches: ["amd64", "arm64"],
      ...(prPayload ? { prPayload } : {}),
      ...(targetRepository ? { targetRepository } : {}),
      registry: await freshRegistry(),
      client: recordingClient().client,
    });

  it("uses a published PR payload that points the PR's tags at the PR's images, pinned by digest", async () => {
    const published = await prepare(undefined, `${server.host}/ci/published`);
    const used = await prepare(`${server.host}/ci/published@${published.digest}`);
    expect(used).toEqual(published);
  });

  it("refuses one that does not, saying what differs and how to fix it", async () => {
    const attempt = prepare(multi.payload);
    await expect(attempt).rejects.toMatchObject({ code: "pr-payload-mismatch" });
    await expect(attempt).rejects.toThrow(
      new RegExp(
        `amd64: tag ovn-kubernetes points at ${multi.pullspecs.get("ovn-kubernetes")!.replace(/[.]/g, "\\.")}, not at the PR's image ${prImage.replace(/[.]/g, "\\.")} \\(sha256:`,
      ),
    );
    await expect(attempt).rejects.toThrow(
      /oc adm release new --from-release BASE TAG=IMAGE…\), or remove pr_payload/,
    );
  });

  it("says where to push when it has to assemble and no repository is configured", async () => {
    await expect(prepare(undefined)).rejects.toThrow(
      /set NETSTRESS_PR_PAYLOAD_REPOSITORY|sets NETSTRESS_PR_PAYLOAD_REPOSITORY/,
    );
  });
});

async function verifiedManifest(repository: string, descriptor: { digest: string; size: number }) {
  const response = await fetch(`${server.url}/v2/${repository}/manifests/${descriptor.digest}`, {
    headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  expect(sha256Digest(bytes)).toBe(descriptor.digest);
  expect(bytes.length).toBe(descriptor.size);
  return bytes;
}
