// Item: the network extension's probe pods ran quay.io/netstress/network-stress-bot:latest by
// default, a mutable tag of a hard-coded organisation, on every node of the cluster under test. They
// now run the runner's own image by digest (the farm configuration pins it, the Job hands it on);
// an image named by tag is refused, saying how to give the digest.
import { describe, expect, it } from "vitest";
import { readExtSettings } from "@netstress/network-extension/ext-settings.ts";
import type { ProbeCluster } from "@netstress/network-extension/probe-cluster.ts";
import { networkTests } from "@netstress/network-extension/network-tests.ts";
import { runExtension } from "@netstress/network-extension/run-extension.ts";
import { buildIterationJob } from "../../src/farm/build-iteration-job.ts";
import { farmConfigSchema } from "../../src/farm/farm-config.ts";
import { DEFAULT_TEST_BINARY_REGISTRY } from "../../src/payload/test-binary-registry.ts";
import { binaryEnvironment } from "../../src/runner/binary-environment.ts";

const RUNNER = `quay.io/netstress/network-stress-bot@sha256:${"7".repeat(64)}`;
const farm = (image: string) => ({
  runner: { image },
  clusters: [{ name: "build01", kubeconfig: "k", namespace: "netstress", arches: ["amd64"], capacity: 1 }],
});

/** `netstress ext <argv>` in-process, with a cluster under test that nothing may be asked of. */
async function ext(argv: string[], env: NodeJS.ProcessEnv) {
  let stdout = "";
  let stderr = "";
  const code = await runExtension({
    argv,
    env,
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    readStdin: async () => undefined,
    signal: new AbortController().signal,
    // Nothing may be asked of the cluster (a ProbeCluster whose every method rejects).
    cluster: async () =>
      new Proxy({} as ProbeCluster, {
        get: (_, name) =>
          name === "then" ? undefined : () => Promise.reject(new Error(`asked the cluster: ${String(name)}`)),
      }),
    build: { commit: "c", buildDate: "d", gitTreeState: "clean" },
  });
  return { code, stdout, stderr };
}

describe("the probe pods' image", () => {
  it("is the runner's own image by digest: the farm's Job hands runner.image on, and the runner passes it to its binaries", () => {
    const config = farmConfigSchema.parse(farm(RUNNER));
    const job = buildIterationJob({
      config,
      cluster: config.clusters[0]!,
      shard: {
        runId: "r".repeat(32),
        id: "amd64-0-0",
        arch: "amd64",
        arms: ["pr"],
        iterations: { first: 0, count: 1 },
        plan: { arch: "amd64", arms: [{ arm: "pr", components: [] }] },
        seed: "seed",
        parallel: 1,
        testTimeoutMs: 60_000,
        retries: 0,
      },
      key: { runId: "r".repeat(32), arch: "amd64", arms: ["pr"], iteration: 0, attempt: 0 },
      instance: "bot",
      testBinaries: DEFAULT_TEST_BINARY_REGISTRY,
    });
    const runner = job.spec!.template.spec!.containers[0]!;
    expect(runner.image).toBe(RUNNER);
    expect(runner.env).toContainEqual({ name: "NETSTRESS_PROBE_IMAGE", value: RUNNER });
    expect(binaryEnvironment({ NETSTRESS_PROBE_IMAGE: RUNNER, SECRET: "s" })).toEqual({
      NETSTRESS_PROBE_IMAGE: RUNNER,
    });
  });

  it("is pinned in the farm configuration: a runner image by tag is refused, saying how to give its digest", () => {
    const parsed = farmConfigSchema.safeParse(farm("quay.io/netstress/network-stress-bot:v1"));
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues.map((i) => `${i.path.join(".")}: ${i.message}`)).toEqual([
      expect.stringMatching(
        /^runner\.image: the runner image by digest \(registry\/name@sha256:<64 hex digits>/,
      ),
    ]);
  });

  it("given by tag to the extension is refused, the message naming the digest form to write", async () => {
    const image = "quay.io/netstress/network-stress-bot:latest";
    expect(() => readExtSettings({ NETSTRESS_PROBE_IMAGE: image })).toThrow(
      `NETSTRESS_PROBE_IMAGE=${image} does not name the image by digest: a tag can move, and the probe pods would run whatever it names then. Give the image you reviewed by digest, quay.io/netstress/network-stress-bot@sha256:<64 hex digits>`,
    );
    expect(readExtSettings({ NETSTRESS_PROBE_IMAGE: RUNNER }).image).toBe(RUNNER);
  });

  it("has no default tag to fall back to: unset, images lists none and a test fails before it deploys anything, saying what to set", async () => {
    expect(readExtSettings({}).image).toBeUndefined();
    expect(JSON.parse((await ext(["images"], {})).stdout)).toEqual([]);
    expect(JSON.parse((await ext(["images"], { NETSTRESS_PROBE_IMAGE: RUNNER })).stdout)).toEqual([
      {
        index: 0,
        registry: "quay.io",
        name: "netstress/network-stress-bot",
        version: `sha256:${"7".repeat(64)}`,
      },
    ]);
    const invariant = networkTests().find((t) => t.kind === "invariant")!.name;
    const run = await ext(["run-test", "-n", invariant, "-o", "jsonl"], {
      KUBECONFIG: "/nonexistent",
      NETSTRESS_INVARIANT_DURATION_SECONDS: "0",
    });
    const [result] = run.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { result: string; error: string });
    expect(result).toMatchObject({ result: "failed" });
    expect(result!.error).toContain(
      "NETSTRESS_PROBE_IMAGE is not set: the probe pods run the runner's own image, by digest",
    );
  });
});
