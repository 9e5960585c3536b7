import { readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { renderSchema } from "../../schemas/generate.ts";
import { farmConfigJsonSchema } from "../../src/farm/farm-config-json-schema.ts";
import { watchSettingsFile } from "../../src/config/watch-settings-file.ts";
import { FarmError } from "../../src/farm/farm-error.ts";
import { loadFarmConfig } from "../../src/farm/load-farm-config.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const VALID = `
runner:
  image: quay.io/netstress/runner@sha256:${"a".repeat(64)}
  serviceAccountName: netstress-runner
  clusterUnderTest: { secretName: cluster-under-test }
  env:
    - { name: HTTPS_PROXY, value: "http://proxy:3128" }
    - { name: REGISTRY_TOKEN, secretKeyRef: { name: pull, key: token } }
clusters:
  - name: build01
    kubeconfig: kubeconfigs/build01
    namespace: netstress
    arches: [amd64]
    capacity: 40
  - name: arm01
    kubeconfig: in-cluster
    namespace: netstress
    arches: [arm64]
    capacity: 8
    capabilities: [ipv6]
    blocked: "kernel upgrade until Friday"
`;

const SOURCES = `
clusterSources:
  - type: static
    name: lab
    clusters:
      - { name: lab-amd64, arch: amd64, kubeconfig: kubeconfigs/lab-amd64, shared: 2 }
      - { name: lab-arm64, arch: arm64, kubeconfigSecret: { namespace: netstress, name: lab-arm64 }, upgrade: true }
  - type: hive
    name: hive
    hub: { kubeconfig: kubeconfigs/hub }
    namespace: netstress-clusters
    platform: aws
    maxClusters: 8
    deployment:
      baseDomain: ci.example.com
      region: us-east-1
      credentialsSecret: aws-creds
      pullSecret: pull-secret
      installConfigSecret: install-config-template
      arches: [amd64, arm64]
`;

let dir: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => dir.remove());

async function load(text: string) {
  const path = join(dir.path, "farm.yaml");
  await writeFile(path, text);
  return loadFarmConfig(path);
}

describe("farm configuration", () => {
  it("reads clusters with defaults filled in and kubeconfig paths relative to the file", async () => {
    const config = await load(VALID);
    expect(config.clusters.map((c) => [c.name, c.kubeconfig, c.blocked])).toEqual([
      ["build01", join(dir.path, "kubeconfigs/build01"), false],
      ["arm01", "in-cluster", "kernel upgrade until Friday"],
    ]);
    expect(config.runner.command).toEqual(["netstress"]);
    expect(config.runner.resources.limits).toEqual({ cpu: "2", memory: "2Gi" });
    expect(config.jobs.infraRetries).toBe(2);
  });

  it("reads cluster sources with their defaults and kubeconfig paths relative to the file", async () => {
    const config = await load(VALID + SOURCES);
    const [lab, hive] = config.clusterSources;
    expect(lab?.type === "static" && lab.clusters.map((c) => [c.kubeconfig, c.shared, c.upgrade])).toEqual([
      [join(dir.path, "kubeconfigs/lab-amd64"), 2, false],
      [undefined, 1, true],
    ]);
    expect(lab?.type === "static" && lab.secretsFrom).toBe("in-cluster");
    expect(
      hive?.type === "hive" && [hive.hub.kubeconfig, hive.claimLifetime, hive.deleteAfter, hive.attempts],
    ).toEqual([join(dir.path, "kubeconfigs/hub"), "8h", "8h", 2]);
    expect((await load(VALID)).clusterSources).toEqual([]);
  });

  it.each([
    [
      "a static cluster with both a kubeconfig and a Secret",
      SOURCES.replace(
        "kubeconfig: kubeconfigs/lab-amd64,",
        "kubeconfig: k, kubeconfigSecret: { namespace: a, name: b },",
      ),
      /clusterSources\.0\.clusters\.0: give kubeconfig or kubeconfigSecret/,
    ],
    [
      "a lifetime Hive cannot parse",
      SOURCES.replace("maxClusters: 8", "maxClusters: 8\n    claimLifetime: 8 hours"),
      /claimLifetime: a duration such as 90m/,
    ],
    [
      "a claim lifetime no longer than a Job may run",
      SOURCES.replace("maxClusters: 8", "maxClusters: 8\n    claimLifetime: 3h30m"),
      /clusterSources\.1\.claimLifetime: 3h30m is not longer than a Job may run \(jobs\.activeDeadlineSeconds: 14400 s\)/,
    ],
    [
      "two sources of one name",
      SOURCES.replace("name: hive", "name: lab"),
      /cluster source names must be unique/,
    ],
    ["an unknown source type", SOURCES.replace("type: hive", "type: hypershift"), /clusterSources\.1\.type/],
  ])("rejects %s in the cluster sources, naming the key", async (_what, sources, problem) => {
    const error = await load(VALID + sources).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FarmError);
    expect((error as FarmError).message).toMatch(problem);
  });

  it.each([
    [
      "a cluster name that is not DNS-safe",
      VALID.replace("name: build01", "name: Build_01"),
      /clusters\.0\.name/,
    ],
    ["a duplicate cluster", VALID.replace("name: arm01", "name: build01"), /cluster names must be unique/],
    ["zero capacity", VALID.replace("capacity: 40", "capacity: 0"), /clusters\.0\.capacity/],
    ["an unknown arch", VALID.replace("[amd64]", "[x86]"), /clusters\.0\.arches/],
    ["a typo in a key", VALID.replace("namespace: netstress", "namepsace: netstress"), /namepsace/],
    [
      "an env var the executor owns",
      VALID.replace("name: HTTPS_PROXY", "name: EXTENSIONS_PAYLOAD_OVERRIDE_sdn"),
      /runner\.env\.0: the executor sets this variable itself/,
    ],
    [
      "a bad quantity",
      VALID.replace(
        "image:",
        "resources: { requests: { cpu: lots, memory: 1Gi }, limits: { cpu: 2, memory: 2Gi } }\n  image:",
      ),
      /cpu/,
    ],
    ["YAML that does not parse", "clusters: [", /farm config .*farm\.yaml/],
  ])("rejects %s, naming the key", async (_what, text, problem) => {
    const error = await load(text).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FarmError);
    expect((error as FarmError).code).toBe("invalid-config");
    expect((error as FarmError).message).toMatch(problem);
  });

  it("reloads a changed file, and keeps the last good configuration when an edit is broken", async () => {
    const path = join(dir.path, "farm.yaml");
    await writeFile(path, VALID);
    let refused = 0;
    const source = await watchSettingsFile({
      path,
      load: (file) =>
        loadFarmConfig(file).catch((error: unknown) => {
          refused += 1;
          throw error;
        }),
      what: "farm configuration",
      logger: pino({ level: "silent" }),
      intervalMs: 20,
    });
    try {
      expect(source.current().clusters[0]!.capacity).toBe(40);
      // A mounted ConfigMap changes by swapping the file, not by writing into it.
      await writeFile(`${path}.new`, VALID.replace("capacity: 40", "capacity: 12"));
      await rename(`${path}.new`, path);
      await expect.poll(() => source.current().clusters[0]!.capacity, { timeout: 3000 }).toBe(12);
      await writeFile(path, "clusters: [");
      // The watcher has read the broken edit and refused it.
      await expect.poll(() => refused, { timeout: 3000 }).toBeGreaterThan(0);
      expect(source.current().clusters[0]!.capacity).toBe(12);
    } finally {
      source.stop();
    }
  });

  it("has its JSON Schema committed and current (regenerate: npx tsx schemas/generate.ts)", async () => {
    const committed = await readFile(
      new URL("../../schemas/farm-config.schema.json", import.meta.url),
      "utf8",
    );
    expect(committed).toBe(renderSchema(farmConfigJsonSchema()));
  });
});
