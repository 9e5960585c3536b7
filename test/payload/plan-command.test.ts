import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildSamplePayload,
  type SamplePayload,
} from "@netstress/testbed/sample-payload/build-sample-payload.ts";
import { inspectPlanBinaries } from "../../src/payload/inspect-plan-binaries.ts";
import { runnablePlan } from "../helpers/runnable-plan.ts";
import { resolvePlan } from "../../src/payload/resolve-plan.ts";
import { resolvedPlanSchema } from "../../src/payload/resolved-plan.ts";
import { createRegistry } from "../../src/registry/create-registry.ts";
import { runNetstress } from "../helpers/run-netstress.ts";

let work: string;
let sample: SamplePayload;

/** Runs the real command line, as a user would, with a private cache. */
function netstress(args: string[], env: Record<string, string> = {}) {
  const cache = args.includes("--cache-dir") ? [] : ["--cache-dir", join(work, "cli-cache")];
  return runNetstress([...args, ...cache], { env: { ...process.env, ...env } });
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "netstress-plan-cli-"));
  sample = await buildSamplePayload({ outDir: join(work, "payload") });
});
afterAll(() => rm(work, { recursive: true, force: true }));

describe("netstress plan", () => {
  it("prints the JSON contract for the sample payload with the PR build as an override", async () => {
    const { code, stdout } = await netstress([
      "plan",
      "--payload",
      sample.payload,
      "--arch",
      "aarch64",
      "--override",
      `${sample.override.tag}=${sample.override.image}`,
      "-o",
      "json",
    ]);
    expect(code).toBe(0);
    const plan = resolvedPlanSchema.parse(JSON.parse(stdout));
    expect(Object.keys(plan.components[0]!)).toEqual([
      "tag",
      "image",
      "digest",
      "binaryPath",
      "source",
      "commit",
      "sourceLocation",
      "available",
      "discoveredBy",
    ]);
    expect(plan).toMatchObject({ arch: "arm64", payload: { ref: sample.payload, name: sample.releaseName } });
    expect(plan.components.map((c) => [c.tag, c.source, c.available])).toEqual([
      ["ovn-kubernetes", "override", true],
      ["sdn", "released", true],
      ["hyperkube", "released", false],
    ]);
  });

  it("takes overrides from EXTENSIONS_PAYLOAD_OVERRIDE_<tag> and prints a table that says what is missing", async () => {
    const { code, stdout } = await netstress(["plan", "--payload", sample.payload, "--arch", "amd64"], {
      [`EXTENSIONS_PAYLOAD_OVERRIDE_${sample.override.tag}`]: sample.override.image,
    });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ovn-kubernetes\s+override\s+yes/m);
    expect(stdout).toMatch(/^hyperkube\s+released\s+no/m);
    expect(stdout).toMatch(
      /2 of 3 components have a test binary for amd64\n {2}hyperkube: no test binary: \/usr\/bin\/k8s-tests-ext\.gz/,
    );
  });

  it("filters tags with EXTENSION_BINARY_OVERRIDE_EXCLUDE_TAGS and says how each component was found", async () => {
    const { code, stdout } = await netstress(["plan", "--payload", sample.payload, "--arch", "amd64"], {
      EXTENSION_BINARY_OVERRIDE_EXCLUDE_TAGS: "sdn,hyperkube",
    });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^TAG\s+SOURCE\s+AVAILABLE\s+FOUND BY\s+DIGEST/m);
    expect(stdout).toMatch(/^ovn-kubernetes\s+released\s+yes\s+table\s/m);
    expect(stdout).not.toMatch(/^(sdn|hyperkube)\s/m);
    expect(stdout).toMatch(/1 of 1 components have a test binary for amd64/);
  });

  it("with --images lists each component's test images once each, and notes a binary too old to list them", async () => {
    const args = ["plan", "--payload", sample.payload, "--arch", "amd64", "--images"];
    const override = ["--override", `${sample.override.tag}=${sample.override.image}`];
    const json = await netstress([...args, ...override, "-o", "json"]);
    expect(json.code).toBe(0);
    const plan = resolvedPlanSchema.parse(JSON.parse(json.stdout));
    const ovn = plan.components.find((c) => c.tag === "ovn-kubernetes")!;
    expect(ovn.images).toEqual([
      { image: "quay.io/openshift/community-e2e-images/agnhost:2.53" },
      {
        image: "registry.k8s.io/e2e-test-images/nginx:1.15-4",
        mapped:
          "quay.io/openshift/community-e2e-images/e2e-1-registry-k8s-io-e2e-test-images-nginx-1-15-4:1.15-4",
      },
      { image: "quay.io/openshift/community-e2e-images/netexec:1.1" },
    ]);
    expect(ovn).toMatchObject({ source: "override", binarySource: { gitTreeState: "clean" } });
    const sdn = plan.components.find((c) => c.tag === "sdn")!;
    expect(sdn.images).toBeUndefined();
    expect(sdn.imagesNote).toMatch(
      /^the binary \(extension API v1\.1\) does not list its test images: .*sdn-tests-ext images failed: the binary exited with code 2/,
    );
    const table = await netstress([...args, ...override]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(
      /test images \(amd64\)\n {2}ovn-kubernetes: 3 images\n {4}quay\.io\/openshift\/community-e2e-images\/agnhost:2\.53\n/,
    );
    expect(table.stdout).toMatch(/\n {2}sdn: not known\n {4}note: the binary/);
  });

  it("runs no binary without --images", async () => {
    const cacheDir = join(work, "fast-cache");
    const { code, stdout } = await netstress([
      "plan",
      "--payload",
      sample.payload,
      "--arch",
      "amd64",
      "-o",
      "json",
      "--cache-dir",
      cacheDir,
    ]);
    expect(code).toBe(0);
    expect(stdout).not.toMatch(/"images"|"binarySource"/);
    await expect(readdir(cacheDir)).resolves.not.toContain("unpacked");
  });

  it("with --images takes a tag rebuilt from the same clean commit as released, and a dirty rebuild as the PR's", async () => {
    const plan = async (payload: string, images: boolean) => {
      const { code, stdout } = await netstress([
        "plan",
        "--payload",
        payload,
        "--baseline-payload",
        sample.payload,
        "--arch",
        "amd64",
        "-o",
        "json",
        ...(images ? ["--images"] : []),
      ]);
      expect(code).toBe(0);
      const ovn = resolvedPlanSchema.parse(JSON.parse(stdout)).components[0]!;
      return [ovn.tag, ovn.source, ovn.rebuiltFromSameSource ?? false, ovn.binarySource?.gitTreeState];
    };
    expect(await plan(sample.rebuiltPayload, true)).toEqual(["ovn-kubernetes", "released", true, "clean"]);
    // The labels name the released commit either way; only the binary knows its tree was dirty.
    expect(await plan(sample.dirtyPayload, false)).toEqual(["ovn-kubernetes", "released", true, undefined]);
    expect(await plan(sample.dirtyPayload, true)).toEqual(["ovn-kubernetes", "override", false, "dirty"]);
    const table = await netstress([
      "plan",
      "--payload",
      sample.dirtyPayload,
      "--baseline-payload",
      sample.payload,
      "--arch",
      "amd64",
      "--images",
    ]);
    expect(table.stdout).toMatch(/^ovn-kubernetes\s+override \(dirty tree\)\s+yes/m);
  });

  it("exits 2 naming the file and the fix for a malformed --extension-imagestream", async () => {
    const file = join(work, "not-an-imagestream.yaml");
    await writeFile(file, "kind: ConfigMap\n");
    const bad = await netstress(["plan", "--payload", sample.payload, "--extension-imagestream", file]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      `netstress: --extension-imagestream ${file}: expected an ImageStream, an ImageStreamTag or a List of them; found kind "ConfigMap"\n`,
    );
  });

  it("exits 2 with a one-line reason on a malformed reference", async () => {
    const bad = await netstress(["plan", "--payload", "quay.io/Org/Release:4.18", "--arch", "amd64"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'netstress: invalid image reference "quay.io/Org/Release:4.18": "Org" is not a valid repository name component (lowercase letters, digits, . _ -)\n',
    );
  });
});

describe("inspecting a plan's binaries", () => {
  it("notes a binary that can no longer be fetched, and inspects the others", async () => {
    const cacheDir = join(work, "inspect-cache");
    const registry = await createRegistry({ cacheDir });
    const plan = await resolvePlan({ payload: sample.payload, arch: "amd64", registry, keepBinaries: true });
    // The image the plan found for sdn is gone from its repository since.
    const gone = `sha256:${"0".repeat(64)}`;
    const moved = {
      ...plan,
      components: plan.components.map((c) => (c.tag === "sdn" ? { ...c, digest: gone } : c)),
    };
    const inspected = await inspectPlanBinaries({ plan: moved, registry, cacheDir });
    const byTag = new Map(inspected.components.map((c) => [c.tag, c]));
    expect(byTag.get("ovn-kubernetes")!.images).toHaveLength(2);
    expect(byTag.get("sdn")).toMatchObject({ source: "released", available: true });
    expect(byTag.get("sdn")!.imagesNote).toMatch(
      /^sdn: .* is sha256:\w+ for amd64 now, not sha256:\w+ as planned$/,
    );
  });
});

describe("fetching from an OCI-layout payload", () => {
  it("extracts the sample PR and released binaries for both arms", async () => {
    const cacheDir = join(work, "cache");
    const registry = await createRegistry({ cacheDir });
    const overrides = new Map([[sample.override.tag, sample.override.image]]);
    const plan = await resolvePlan({ payload: sample.payload, arch: "amd64", overrides, registry });
    const baselinePlan = await resolvePlan({ payload: sample.payload, arch: "amd64", registry });
    const execution = await runnablePlan({ plan, baselinePlan, cacheDir, registry });
    const script = async (arm: number, tag: string) => {
      const component = execution.arms[arm]!.components.find((c) => c.component === tag)!;
      expect(component.binary).toMatch(new RegExp(`/${tag}-tests-ext\\.gz$`));
      return gunzipSync(await readFile(component.binary)).toString("utf8");
    };
    const prOvn = await script(0, "ovn-kubernetes");
    const releasedOvn = await script(1, "ovn-kubernetes");
    expect(prOvn).toMatch(/^#!\/usr\/bin\/env node/);
    expect(prOvn).not.toBe(releasedOvn);
    expect(execution.arms.map((a) => a.components.map((c) => `${c.component}:${c.source}`))).toEqual([
      ["ovn-kubernetes:override", "sdn:released"],
      ["ovn-kubernetes:released", "sdn:released"],
    ]);
  });
});
