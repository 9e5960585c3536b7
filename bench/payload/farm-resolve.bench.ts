// What the resolve stage of a run costs the bot's worker, as a farm-mode bot runs it: a payload of
// COMPONENTS tags, each with a gzipped test binary of BINARY_MIB MiB at the conventional path (2
// arches), in a local docker-registry; a PR run on it with the released binaries beside the PR's.
// Cold: a fresh cache, as the first run of a payload; warm: the next run of the same payload.
// Counts the requests, the blob requests and the bytes the registry sent, and what the data
// directory holds afterwards. Run: node --import tsx bench/payload/farm-resolve.bench.ts [--runs N]
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { createPayloadPlanResolver } from "../../src/queue/payload-plan-resolver.ts";
import { createDistributionClient } from "../../src/registry/distribution-client.ts";
import { createRegistry } from "../../src/registry/create-registry.ts";
import { diskUsage } from "../../test/helpers/disk-usage.ts";
import { runRecord } from "../../test/helpers/github-run-deps.ts";
import { pushPayload, type PayloadComponentSpec } from "../../test/helpers/oci-push-payload.ts";
import { startRegistry } from "../../test/helpers/start-registry.ts";

const COMPONENTS = 20;
const BINARY_MIB = 4;
const at = process.argv.indexOf("--runs");
const RUNS = at > 0 ? Number(process.argv[at + 1]) : 3;

interface Sample {
  wallMs: number;
  requests: number;
  blobRequests: number;
  bytes: number;
  diskBytes: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

const server = await startRegistry();
const work = await mkdtemp(join(tmpdir(), "netstress-bench-farm-resolve-"));
try {
  // Random bytes do not compress away: a layer costs what its binary weighs.
  const components: PayloadComponentSpec[] = Array.from({ length: COMPONENTS }, (_, i) => ({
    tag: `component-${String(i).padStart(2, "0")}`,
    binary: gzipSync(randomBytes(BINARY_MIB * 1024 * 1024)),
  }));
  const { payload } = await pushPayload({
    url: server.url,
    host: server.host,
    repository: "ocp/release",
    name: "4.20.0-0.bench",
    arches: ["amd64", "arm64"],
    components,
  });

  /** One resolve of a run of the payload, with a registry client that counts what it is sent. */
  async function resolveOnce(cacheDir: string): Promise<Sample> {
    const counted = { requests: 0, blobRequests: 0, bytes: 0 };
    const client = createDistributionClient({
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        counted.requests++;
        if (/\/blobs\/sha256:/.test(String(input instanceof Request ? input.url : input)))
          counted.blobRequests++;
        counted.bytes += Number(response.headers.get("content-length") ?? 0);
        return response;
      },
    });
    const resolve = createPayloadPlanResolver({ registry: await createRegistry({ cacheDir, client }) });
    const started = performance.now();
    const resolution = await resolve({
      run: runRecord({
        source: { tags: [], parallel: 2, timeoutMinutes: 60, imageWaitMinutes: 30, payload },
        options: { iterations: 5, baseline: "payload" },
      }),
      signal: AbortSignal.timeout(300_000),
    });
    const wallMs = performance.now() - started;
    if (resolution.kind !== "ready")
      throw new Error(`the run did not resolve: ${JSON.stringify(resolution)}`);
    return { wallMs, ...counted, diskBytes: await diskUsage(cacheDir) };
  }

  const cold: Sample[] = [];
  const warm: Sample[] = [];
  for (let run = 0; run < RUNS; run++) {
    const cacheDir = await mkdtemp(join(work, "cache-"));
    cold.push(await resolveOnce(cacheDir));
    warm.push(await resolveOnce(cacheDir));
  }
  const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
  console.log(
    `payload: ${COMPONENTS} components × 2 arches, a ${BINARY_MIB} MiB gzipped binary each; a PR run with baseline=payload, arch amd64; ${RUNS} runs, medians`,
  );
  console.log("| case | wall time | requests | blob requests | bytes received | data dir after |");
  console.log("| --- | --- | --- | --- | --- | --- |");
  for (const [name, samples] of [
    ["cold cache (first run of the payload)", cold],
    ["warm cache (next run of the payload)", warm],
  ] as const) {
    const m = (key: keyof Sample) => median(samples.map((s) => s[key]));
    console.log(
      `| ${name} | ${m("wallMs").toFixed(0)} ms | ${m("requests")} | ${m("blobRequests")} | ${mib(m("bytes"))} | ${mib(m("diskBytes"))} |`,
    );
  }
} finally {
  await rm(work, { recursive: true, force: true });
  await server.stop();
}
