// Plan resolution for a generated payload of 190 tags (30 with test binaries, 2 arches) against a
// local docker-registry: cold and warm wall time and request counts, beside the same number of plain
// manifest GETs issued concurrently. Run: npm run bench:payload [-- --runs N --concurrency N]
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import pLimit from "p-limit";
import { resolvePlan } from "../../src/payload/resolve-plan.ts";
import { MANIFEST_ACCEPT } from "../../src/registry/manifest.ts";
import { createDistributionClient } from "../../src/registry/distribution-client.ts";
import { createRegistry } from "../../src/registry/create-registry.ts";
import { pushPayload, type PayloadComponentSpec } from "../../test/helpers/oci-push-payload.ts";
import { startRegistry } from "../../test/helpers/start-registry.ts";

const TAGS = 190;
const WITH_TESTS = 30;
const ARCHES = ["amd64", "arm64"] as const;
const numberArg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const RUNS = numberArg("--runs", 5);
/** The registry client's bound on requests in flight; the plain GETs get the same bound. */
const CONCURRENCY = numberArg("--concurrency", 16);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const ms = (n: number) => `${n.toFixed(1)} ms`;

const server = await startRegistry();
const work = await mkdtemp(join(tmpdir(), "netstress-bench-payload-"));
try {
  const components: PayloadComponentSpec[] = Array.from({ length: TAGS }, (_, i) => {
    const tag = `component-${String(i).padStart(3, "0")}`;
    // A small gzipped binary that does not compress away, so that layers cost what bytes cost.
    return i < WITH_TESTS ? { tag, binary: gzipSync(randomBytes(64 * 1024)) } : { tag };
  });
  const pushStart = performance.now();
  const pushed = await pushPayload({
    url: server.url,
    host: server.host,
    repository: "ocp/release",
    name: "4.20.0-0.bench",
    arches: ARCHES,
    components,
  });
  const payload = `${server.host}/ocp/release@${pushed.digest}`;
  const testBinaries = {
    defaultPath: "/usr/bin/{tag}-tests-ext.gz",
    components: components.slice(0, WITH_TESTS).map((c) => ({ tag: c.tag })),
  };
  console.error(
    `pushed ${TAGS} components × ${ARCHES.length} arches in ${ms(performance.now() - pushStart)}`,
  );

  const manifestUrls = [...pushed.pullspecs.values()].map((pullspec) => {
    const [name, digest] = pullspec.split("@");
    return `${server.url}/v2/${name!.slice(server.host.length + 1)}/manifests/${digest}`;
  });

  async function resolveOnce(cacheDir: string) {
    let requests = 0;
    const client = createDistributionClient({
      concurrency: CONCURRENCY,
      fetch: (input, init) => {
        requests++;
        return fetch(input, init);
      },
    });
    const registry = await createRegistry({ cacheDir, client });
    const started = performance.now();
    const plan = await resolvePlan({ payload, arch: "amd64", testBinaries, registry });
    const elapsed = performance.now() - started;
    await registry.settled();
    const available = plan.components.filter((c) => c.available).length;
    if (available !== WITH_TESTS)
      throw new Error(`expected ${WITH_TESTS} runnable components, got ${available}`);
    return { elapsed, requests };
  }

  async function plainGets(count: number, concurrency: number) {
    const limit = pLimit(concurrency);
    const started = performance.now();
    await Promise.all(
      Array.from({ length: count }, (_, i) =>
        limit(async () => {
          const response = await fetch(manifestUrls[i % manifestUrls.length]!, {
            headers: { accept: MANIFEST_ACCEPT },
          });
          await response.arrayBuffer();
        }),
      ),
    );
    return performance.now() - started;
  }

  const cold: number[] = [];
  const warm: number[] = [];
  const gets: number[] = [];
  const unbounded: number[] = [];
  let coldRequests = 0;
  let warmRequests = 0;
  // One untimed round first: the registry's own caches and Node's JIT warm up for both sides alike.
  await resolveOnce(await mkdtemp(join(work, "cache-")));
  for (let run = 0; run < RUNS; run++) {
    const cacheDir = await mkdtemp(join(work, "cache-"));
    const first = await resolveOnce(cacheDir);
    cold.push(first.elapsed);
    coldRequests = first.requests;
    gets.push(await plainGets(first.requests, CONCURRENCY));
    unbounded.push(await plainGets(first.requests, first.requests));
    const again = await resolveOnce(cacheDir);
    warm.push(again.elapsed);
    warmRequests = Math.max(warmRequests, again.requests);
  }

  const rows = [
    ["cold plan resolution", ms(median(cold)), String(coldRequests)],
    [`${coldRequests} plain manifest GETs, ${CONCURRENCY} at a time`, ms(median(gets)), String(coldRequests)],
    [`${coldRequests} plain manifest GETs, all at once`, ms(median(unbounded)), String(coldRequests)],
    ["warm plan resolution (digest-pinned)", ms(median(warm)), String(warmRequests)],
  ];
  console.log(
    `payload: ${TAGS} tags, ${WITH_TESTS} with test binaries, ${ARCHES.join("+")}; arch amd64; ${RUNS} runs, medians`,
  );
  console.log("| case | median wall time | HTTP requests |\n| --- | --- | --- |");
  for (const row of rows) console.log(`| ${row.join(" | ")} |`);
  const ratio = median(cold) / median(gets);
  console.log(`\ncold / plain GETs (same bound): ${ratio.toFixed(2)}× (goal ≤ 2×)`);
  console.log(`warm: ${warmRequests} requests (goal 0), ${ms(median(warm))} (goal < 50 ms)`);
  process.exitCode = ratio <= 2 && warmRequests === 0 && median(warm) < 50 ? 0 : 1;
} finally {
  await server.stop();
  await rm(work, { recursive: true, force: true });
}
