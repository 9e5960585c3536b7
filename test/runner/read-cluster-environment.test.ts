import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSampleBinary } from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import { AWS_ONLY_TEST, NOT_ON_OVN_TEST, isolationSample } from "@netstress/testbed/sample-ext/suites.ts";
import { executeRun } from "../../src/runner/execute-run.ts";
import { readClusterEnvironment } from "../../src/runner/read-cluster-environment.ts";
import { readResultRecords } from "../../src/runner/read-result-records.ts";
import { tempDir } from "../helpers/temp-dir.ts";

/** The three cluster-scoped config objects openshift-tests reads, as an OpenShift API server serves them. */
const OBJECTS: Record<string, unknown> = {
  infrastructures: {
    apiVersion: "config.openshift.io/v1",
    kind: "Infrastructure",
    metadata: { name: "cluster" },
    status: { platform: "AWS", platformStatus: { type: "AWS" }, controlPlaneTopology: "HighlyAvailable" },
  },
  networks: {
    apiVersion: "config.openshift.io/v1",
    kind: "Network",
    metadata: { name: "cluster" },
    status: {
      networkType: "OVNKubernetes",
      clusterNetwork: [
        { cidr: "10.128.0.0/14", hostPrefix: 23 },
        { cidr: "fd01::/48", hostPrefix: 64 },
      ],
    },
  },
  clusterversions: {
    apiVersion: "config.openshift.io/v1",
    kind: "ClusterVersion",
    metadata: { name: "version" },
    status: {
      desired: { version: "4.21.3" },
      history: [
        { state: "Completed", version: "4.21.3" },
        { state: "Completed", version: "4.20.9" },
      ],
      capabilities: { enabledCapabilities: ["Console", "Ingress"] },
    },
  },
};

let dir: { path: string; remove: () => Promise<void> };
let server: Server;
let kubeconfig: string;
const seen: { path: string; authorization?: string }[] = [];
let deny = new Set<string>();
let hidden = new Set<string>();

beforeAll(async () => {
  dir = await tempDir();
  server = createServer((req, res) => {
    seen.push({ path: req.url ?? "", authorization: req.headers.authorization });
    const match = /^\/apis\/config\.openshift\.io\/v1\/([a-z]+)\/([a-z]+)$/.exec(req.url ?? "");
    const stored = match ? (OBJECTS[match[1]!] as { metadata: { name: string } } | undefined) : undefined;
    // Served under its own name only, as the API server does (ClusterVersion is "version").
    const object = match && stored?.metadata.name === match[2] && !hidden.has(match[1]!) ? stored : undefined;
    if (match && deny.has(match[1]!)) {
      res.writeHead(403, { "content-type": "application/json" });
      res.end(JSON.stringify({ kind: "Status", status: "Failure", reason: "Forbidden", code: 403 }));
      return;
    }
    res.writeHead(object ? 200 : 404, { "content-type": "application/json" });
    res.end(JSON.stringify(object ?? { kind: "Status", status: "Failure", reason: "NotFound", code: 404 }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  kubeconfig = join(dir.path, "kubeconfig");
  await writeFile(
    kubeconfig,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters: [{name: under-test, cluster: {server: 'http://127.0.0.1:" +
        port +
        "', insecure-skip-tls-verify: true}}]",
      "users: [{name: tester, user: {token: sekret}}]",
      "contexts: [{name: ctx, context: {cluster: under-test, user: tester}}]",
      "current-context: ctx",
    ].join("\n"),
  );
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await dir.remove();
});

describe("readClusterEnvironment", () => {
  it("reads platform, topology, network, IP stack, version, upgrade and capabilities from the cluster", async () => {
    deny = new Set();
    const environment = await readClusterEnvironment({ kubeconfig, arch: "arm64" });
    expect(environment).toEqual({
      architecture: "arm64",
      platform: "aws",
      topology: "HighlyAvailable",
      network: "ovn",
      networkStack: "dual",
      version: "4.21",
      upgrade: "minor",
      optionalCapabilities: ["Console", "Ingress"],
    });
    expect(seen.at(-1)?.authorization).toBe("Bearer sekret");
  });

  it("names the object it could not read and how to go on", async () => {
    deny = new Set(["networks"]);
    await expect(readClusterEnvironment({ kubeconfig, arch: "amd64" })).rejects.toThrow(
      /cannot read networks\.config\.openshift\.io\/cluster from the cluster under test \(http:\/\/127\.0\.0\.1:\d+\): HTTP 403; give the environment with flags/,
    );
  });

  it("leaves unset what a cluster does not serve (a plain Kubernetes cluster has no config.openshift.io)", async () => {
    deny = new Set();
    hidden = new Set(["infrastructures", "clusterversions"]);
    try {
      expect(await readClusterEnvironment({ kubeconfig, arch: "amd64" })).toEqual({
        architecture: "amd64",
        network: "ovn",
        networkStack: "dual",
      });
    } finally {
      hidden = new Set();
    }
  });

  it("gives a run the cluster's environment, with the plan's values on top", async () => {
    deny = new Set();
    const binary = await writeSampleBinary({ suite: isolationSample, path: join(dir.path, "cno") });
    const { paths, manifest } = await executeRun({
      plan: {
        arch: "amd64",
        selection: { environment: { topology: "SingleReplica" } },
        arms: [{ arm: "pr", components: [{ component: "cluster-network-operator", binary }] }],
      },
      outDir: join(dir.path, "run"),
      iterations: 1,
      parallel: 8,
      seed: "cluster",
      timeoutMs: 30_000,
      retries: 0,
      env: { ...process.env, KUBECONFIG: kubeconfig, SAMPLE_EXT_TIME_SCALE: "0" },
    });
    expect(manifest).toMatchObject({
      environmentSource: "cluster+flags",
      environment: { platform: "aws", network: "ovn", topology: "SingleReplica", architecture: "amd64" },
    });
    const names = new Set<string>();
    for await (const r of readResultRecords(paths.results)) names.add(r.name);
    expect(names).toContain(AWS_ONLY_TEST);
    expect(names).not.toContain(NOT_ON_OVN_TEST);
  }, 60_000);
});
