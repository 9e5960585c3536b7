import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { parseImageReferences, type ReleaseImageReferences } from "../../src/payload/image-references.ts";
import { mergeOverrides, overridesFromEnv, parseOverrideFlags } from "../../src/payload/overrides.ts";
import { planComponents } from "../../src/payload/plan-components.ts";
import { tagFilterFromEnv } from "../../src/payload/tag-filter.ts";
import {
  DEFAULT_TEST_BINARY_REGISTRY,
  testBinaryPath,
  testBinaryTable,
} from "../../src/payload/test-binary-registry.ts";

const fixture = await readFile(
  new URL("../fixtures/payload/image-references-4.1.0.json", import.meta.url),
  "utf8",
);

describe("image-references", () => {
  it("keeps per tag the pullspec, its digest, the commit and the source location (OCP 4.1.0)", () => {
    expect(parseImageReferences({ text: fixture, source: "4.1.0" })).toEqual({
      name: "4.1.0",
      tags: [
        {
          tag: "aws-machine-controllers",
          pullspec:
            "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:7483248489c918e0c65a6b391bd171da0565cb9995b2acc61a1e517b6551e037",
          digest: "sha256:7483248489c918e0c65a6b391bd171da0565cb9995b2acc61a1e517b6551e037",
          commit: "d8d8e285fc19920c3311e791f4fe22db7003588f",
          sourceLocation: "https://github.com/openshift/cluster-api-provider-aws",
        },
      ],
    });
  });

  const mutated = (change: (doc: Record<string, unknown>) => void) => {
    const doc = JSON.parse(fixture) as Record<string, unknown>;
    change(doc);
    return JSON.stringify(doc);
  };

  it.each([
    [
      "a wrong kind",
      mutated((d) => (d.kind = "ConfigMap")),
      /expected kind ImageStream, apiVersion image\.openshift\.io\/v1; found kind "ConfigMap"/,
    ],
    [
      "a wrong apiVersion",
      mutated((d) => (d.apiVersion = "v1")),
      /found kind "ImageStream", apiVersion "v1"/,
    ],
    ["text that is not JSON", "kind: ImageStream\n", /not JSON/],
    [
      "a tag that is not a DockerImage",
      mutated(
        (d) =>
          ((d.spec as { tags: Array<{ from: { kind: string } }> }).tags[0]!.from.kind = "ImageStreamTag"),
      ),
      /tag aws-machine-controllers points at a ImageStreamTag/,
    ],
    [
      "a malformed pullspec",
      mutated(
        (d) =>
          ((d.spec as { tags: Array<{ from: { name: string } }> }).tags[0]!.from.name = "quay.io/UPPER/x"),
      ),
      /tag aws-machine-controllers: invalid image reference/,
    ],
  ])("refuses %s", (_what, text, message) => {
    expect(() => parseImageReferences({ text, source: "payload X" })).toThrow(message);
  });
});

describe("test binary registry", () => {
  it("uses origin's paths: the default pattern and its exceptions", () => {
    expect(testBinaryPath(DEFAULT_TEST_BINARY_REGISTRY, "ovn-kubernetes")).toBe(
      "/usr/bin/ovn-kubernetes-tests-ext.gz",
    );
    expect(testBinaryPath(DEFAULT_TEST_BINARY_REGISTRY, "hyperkube")).toBe("/usr/bin/k8s-tests-ext.gz");
    expect(testBinaryPath(DEFAULT_TEST_BINARY_REGISTRY, "machine-api-operator")).toBe(
      "/machine-api-tests-ext.gz",
    );
    expect(testBinaryPath(DEFAULT_TEST_BINARY_REGISTRY, "not-listed")).toBe(
      "/usr/bin/not-listed-tests-ext.gz",
    );
  });
});

describe("overrides", () => {
  it("reads --override flags and EXTENSIONS_PAYLOAD_OVERRIDE_<tag>, flags winning", () => {
    const env = overridesFromEnv({
      "EXTENSIONS_PAYLOAD_OVERRIDE_ovn-kubernetes": "quay.io/pr/ovn:env",
      EXTENSIONS_PAYLOAD_OVERRIDE_sdn: "quay.io/pr/sdn:env",
      EXTENSIONS_PAYLOAD_OVERRIDE: "quay.io/whole/payload:x",
      PATH: "/usr/bin",
    });
    const flags = parseOverrideFlags(["ovn-kubernetes=quay.io/pr/ovn:flag"]);
    expect(Object.fromEntries(mergeOverrides(env, flags))).toEqual({
      "ovn-kubernetes": "quay.io/pr/ovn:flag",
      sdn: "quay.io/pr/sdn:env",
    });
  });

  it.each([
    [["ovn-kubernetes"], /expects TAG=PULLSPEC/],
    [["=quay.io/x/y:z"], /expects TAG=PULLSPEC/],
    [["ovn-kubernetes=quay.io/Bad/x"], /"Bad" is not a valid repository name component/],
    [["sdn=quay.io/a/b:1", "sdn=quay.io/a/b:2"], /names sdn twice/],
  ])("refuses %j", (values, message) => {
    expect(() => parseOverrideFlags(values)).toThrow(message);
  });
});

describe("planning components (pure)", () => {
  const tag = (name: string, digest: string, commit: string) => ({
    tag: name,
    pullspec: `quay.io/ocp/art@sha256:${digest.repeat(64)}`,
    digest: `sha256:${digest.repeat(64)}`,
    commit,
    sourceLocation: `https://github.com/openshift/${name}`,
  });
  const registry = {
    defaultPath: "/usr/bin/{tag}-tests-ext.gz",
    components: [{ tag: "ovn-kubernetes" }, { tag: "sdn" }, { tag: "absent" }],
  };
  const released: ReleaseImageReferences = {
    name: "4.18.0",
    tags: [tag("ovn-kubernetes", "a", "c1"), tag("sdn", "b", "c2"), tag("cli", "c", "c3")],
  };

  it("takes overridden tags from the PR image and the rest from the payload, skipping tags the payload lacks", () => {
    const plan = planComponents({
      release: released,
      registry,
      overrides: new Map([["ovn-kubernetes", "quay.io/pr/ovn:pr-1"]]),
    });
    expect(plan.map((c) => [c.tag, c.source, c.image, c.commit, c.basis, c.required])).toEqual([
      ["ovn-kubernetes", "override", "quay.io/pr/ovn:pr-1", null, "table", true],
      ["sdn", "released", released.tags[1]!.pullspec, "c2", "table", true],
      // Not listed: probed at the conventional path, and left out of the plan if it has no binary.
      ["cli", "released", released.tags[2]!.pullspec, "c3", "convention", false],
    ]);
    expect(plan[2]!.binaryPath).toBe("/usr/bin/cli-tests-ext.gz");
    expect(plan[0]!.sourceLocation).toBe("https://github.com/openshift/ovn-kubernetes");
  });

  it("with a baseline payload, infers overrides from differing digests or commits", () => {
    const pr: ReleaseImageReferences = {
      name: "4.18.0-pr",
      tags: [tag("ovn-kubernetes", "d", "c9"), tag("sdn", "b", "c2"), tag("cli", "c", "c3")],
    };
    const sameDigestNewCommit: ReleaseImageReferences = {
      name: "x",
      tags: [tag("ovn-kubernetes", "a", "c1"), tag("sdn", "b", "c7")],
    };
    expect(
      planComponents({ release: pr, registry, baseline: released }).map((c) => [c.tag, c.source]),
    ).toEqual([
      ["ovn-kubernetes", "override"],
      ["sdn", "released"],
      ["cli", "released"],
    ]);
    expect(
      planComponents({ release: sameDigestNewCommit, registry, baseline: released }).map((c) => c.source),
    ).toEqual(["released", "override"]);
  });

  it("runs a tag rebuilt from the same source commit (another digest) as released, and says so", () => {
    const rebuilt: ReleaseImageReferences = {
      name: "4.18.0-rebuilt",
      tags: [tag("ovn-kubernetes", "e", "c1"), tag("sdn", "f", "c8"), tag("cli", "c", "c3")],
    };
    expect(
      planComponents({ release: rebuilt, registry, baseline: released }).map((c) => [
        c.tag,
        c.source,
        c.rebuiltFromSameSource ?? false,
      ]),
    ).toEqual([
      ["ovn-kubernetes", "released", true],
      ["sdn", "override", false],
      ["cli", "released", false],
    ]);
  });
});

describe("the test binary table per release version", () => {
  const registry = {
    defaultPath: "/usr/bin/{tag}-tests-ext.gz",
    components: [{ tag: "hyperkube", path: "/usr/bin/k8s-tests-ext.gz" }, { tag: "cluster-etcd-operator" }],
    versions: [
      { versions: ["4.18"], components: [], remove: ["cluster-etcd-operator"] },
      { versions: ["4.18", "4.19"], components: [{ tag: "hyperkube", path: "/old/k8s.gz" }], remove: [] },
    ],
  };
  const table = (release: string) => Object.fromEntries(testBinaryTable({ registry, release }));

  it("applies the blocks naming the payload's minor version, in order", () => {
    expect(table("4.18.0-0.nightly-2024-11-15-135718")).toEqual({ hyperkube: "/old/k8s.gz" });
    expect(table("4.19.3")).toEqual({
      hyperkube: "/old/k8s.gz",
      "cluster-etcd-operator": "/usr/bin/cluster-etcd-operator-tests-ext.gz",
    });
  });

  it("gives the base table to other versions and to names without a version", () => {
    const base = {
      hyperkube: "/usr/bin/k8s-tests-ext.gz",
      "cluster-etcd-operator": "/usr/bin/cluster-etcd-operator-tests-ext.gz",
    };
    expect(table("4.20.0")).toEqual(base);
    expect(table("4.180.1")).toEqual(base);
    expect(table("custom-release")).toEqual(base);
  });

  it("keeps origin's exceptions in the defaults", () => {
    const defaults = Object.fromEntries(
      testBinaryTable({ registry: DEFAULT_TEST_BINARY_REGISTRY, release: "4.21.0" }),
    );
    expect(defaults).toMatchObject({
      hyperkube: "/usr/bin/k8s-tests-ext.gz",
      "machine-api-operator": "/machine-api-tests-ext.gz",
      "cluster-version-operator": "/usr/bin/cluster-version-operator-tests.gz",
      "ovn-kubernetes": "/usr/bin/ovn-kubernetes-tests-ext.gz",
    });
  });
});

describe("EXTENSION_BINARY_OVERRIDE_INCLUDE_TAGS / _EXCLUDE_TAGS", () => {
  it("reads comma-separated tags, ignoring blanks", () => {
    expect(
      tagFilterFromEnv({
        EXTENSION_BINARY_OVERRIDE_INCLUDE_TAGS: " hyperkube, ,ovn-kubernetes ",
        EXTENSION_BINARY_OVERRIDE_EXCLUDE_TAGS: "",
      }),
    ).toEqual({ include: ["hyperkube", "ovn-kubernetes"], exclude: [] });
    expect(tagFilterFromEnv({})).toEqual({ include: [], exclude: [] });
  });
});
