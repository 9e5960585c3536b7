import { readFile } from "node:fs/promises";
import { Redis } from "ioredis";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { parseImageReferences } from "../../src/payload/image-references.ts";
import { diffPayloads } from "../../src/payload/payload-changes.ts";
import { readPayloadChanges } from "../../src/payload/read-payload-changes.ts";
import { createRegistry } from "../../src/registry/create-registry.ts";
import { cachePayloadChanges } from "../../src/trends/payload-changes-cache.ts";
import { pushPayload } from "../helpers/oci-push-payload.ts";
import { startRegistry, type RegistryServer } from "../helpers/start-registry.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const SOURCE = "io.openshift.build.source-location";
const COMMIT = "io.openshift.build.commit.id";

interface Tag {
  name: string;
  annotations: Record<string, string>;
  from: { kind: string; name: string };
}

/**
 * The real 4.1.0 image-references document with its one tag copied under more names, each with a
 * commit and digest of its own: a payload, and the same payload after `edit` changed some tags.
 */
async function payloads(edit: (tags: Tag[]) => Tag[]) {
  const text = await readFile(
    new URL("../fixtures/payload/image-references-4.1.0.json", import.meta.url),
    "utf8",
  );
  const document = JSON.parse(text) as { metadata: { name: string }; spec: { tags: Tag[] } };
  const [model] = document.spec.tags;
  const tags = ["aws-machine-controllers", "cli", "multus-cni", "ovn-kubernetes", "sdn"].map((name, index) =>
    index === 0
      ? model!
      : {
          ...model!,
          name,
          annotations: {
            ...model!.annotations,
            [COMMIT]: String(index).repeat(40),
            [SOURCE]: `https://github.com/openshift/${name}`,
          },
          from: {
            kind: "DockerImage",
            name: `quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:${String(index).repeat(64)}`,
          },
        },
  );
  const parse = (name: string, list: Tag[]) =>
    parseImageReferences({
      text: JSON.stringify({ ...document, metadata: { ...document.metadata, name }, spec: { tags: list } }),
      source: name,
    });
  return { from: parse("4.1.0", tags), to: parse("4.1.1", edit(structuredClone(tags))) };
}

describe("what changed between two payloads", () => {
  it("names each component whose digest or commit differ, with commit and compare links through its source location", async () => {
    const { from, to } = await payloads((tags) => {
      const byName = Object.fromEntries(tags.map((t) => [t.name, t]));
      byName["ovn-kubernetes"]!.annotations[COMMIT] = "a".repeat(40);
      byName["ovn-kubernetes"]!.from.name = `quay.io/x@sha256:${"a".repeat(64)}`;
      byName["sdn"]!.from.name = `quay.io/x@sha256:${"b".repeat(64)}`;
      byName["multus-cni"]!.annotations[COMMIT] = "c".repeat(40);
      byName["multus-cni"]!.annotations[SOURCE] = "javascript:alert(1)";
      const brandNew = {
        ...byName["sdn"]!,
        name: "brand-new",
        annotations: { [COMMIT]: "e".repeat(40), [SOURCE]: "https://github.com/openshift/brand-new/" },
      };
      return [...tags.filter((t) => t.name !== "cli"), brandNew];
    });
    const diff = diffPayloads({ from, to });
    expect(diff).toMatchObject({ from: "4.1.0", to: "4.1.1", unchanged: 1 });
    expect(diff.changes.map((c) => [c.tag, c.kind, c.digestChanged, c.commitChanged])).toEqual([
      ["brand-new", "added", false, false],
      ["cli", "removed", false, false],
      ["multus-cni", "changed", false, true],
      ["ovn-kubernetes", "changed", true, true],
      ["sdn", "changed", true, false],
    ]);
    const byTag = Object.fromEntries(diff.changes.map((c) => [c.tag, c]));
    const ovn = "https://github.com/openshift/ovn-kubernetes";
    expect(byTag["ovn-kubernetes"]!.from!.commitUrl).toBe(`${ovn}/commit/${"3".repeat(40)}`);
    expect(byTag["ovn-kubernetes"]!.compareUrl).toBe(`${ovn}/compare/${"3".repeat(40)}...${"a".repeat(40)}`);
    // A rebuild of the same commit has nothing to compare; a location that is no web address gets no link.
    expect(byTag["sdn"]!.compareUrl).toBeNull();
    expect(byTag["multus-cni"]!.to!.commitUrl).toBeNull();
    expect(byTag["multus-cni"]!.compareUrl).toBeNull();
    expect(byTag["brand-new"]!.to!.commitUrl).toBe(
      `https://github.com/openshift/brand-new/commit/${"e".repeat(40)}`,
    );
    // The real tag (openshift/cluster-api-provider-aws) is the one left alone; a payload against itself has no change.
    expect(diffPayloads({ from, to: from })).toEqual({
      from: "4.1.0",
      to: "4.1.0",
      changes: [],
      unchanged: 5,
    });
  });
});

describe("reading the changes from a registry, cached per payload pair", () => {
  let server: RegistryServer;
  let redis: Redis;
  let first: string;
  let second: string;

  beforeAll(async () => {
    server = await startRegistry();
    redis = new Redis(inject("redisUrl"), { maxRetriesPerRequest: null });
    const common = {
      url: server.url,
      host: server.host,
      repository: "ocp/release",
      arches: ["amd64", "arm64"],
    };
    const components = [
      { tag: "ovn-kubernetes", binary: "ovn", commit: "1".repeat(40) },
      { tag: "sdn", binary: "sdn", commit: "2".repeat(40) },
      { tag: "cli", commit: "3".repeat(40) },
    ];
    const one = await pushPayload({ ...common, name: "4.20.0-0.nightly-1", components, releaseTag: "one" });
    const two = await pushPayload({
      ...common,
      name: "4.20.0-0.nightly-2",
      components: components.map((c) =>
        c.tag === "ovn-kubernetes" ? { ...c, binary: "ovn 2", commit: "f".repeat(40) } : c,
      ),
      releaseTag: "two",
    });
    first = `${server.host}/ocp/release@${one.digest}`;
    second = `${server.host}/ocp/release@${two.digest}`;
  }, 60_000);

  afterAll(async () => {
    await redis?.quit();
    await server?.stop();
  });

  it("reads both payloads' image-references once, and answers the same pair from Redis after", async () => {
    const dir = await tempDir();
    try {
      const registry = await createRegistry({ cacheDir: dir.path });
      let reads = 0;
      const changes = cachePayloadChanges({
        redis,
        prefix: `t-${randomUUID()}`,
        read: async (pair) => {
          reads++;
          return readPayloadChanges({ registry, ...pair });
        },
      });
      const pair = { from: first, to: second, arch: "arm64" as const };
      const read = await changes(pair);
      expect(read).toMatchObject({ from: "4.20.0-0.nightly-1", to: "4.20.0-0.nightly-2", unchanged: 2 });
      expect(
        !(read instanceof Error) && read.changes.map((c) => [c.tag, c.commitChanged, c.compareUrl]),
      ).toEqual([
        [
          "ovn-kubernetes",
          true,
          `https://github.com/openshift/ovn-kubernetes/compare/${"1".repeat(40)}...${"f".repeat(40)}`,
        ],
      ]);
      expect(await changes(pair)).toEqual(read);
      expect(reads).toBe(1);

      // A payload that cannot be read: the reason, kept for a while rather than asked on every view.
      const missing = {
        from: first,
        to: `${server.host}/ocp/release@sha256:${"0".repeat(64)}`,
        arch: "amd64" as const,
      };
      const error = await changes(missing);
      expect(error).toBeInstanceOf(Error);
      expect((await changes(missing)) as Error).toMatchObject({ message: (error as Error).message });
      expect(reads).toBe(2);
      await registry.settled();
    } finally {
      await dir.remove();
    }
  }, 60_000);
});
