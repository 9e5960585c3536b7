// Plan resolution for a generated payload of 190 tags (30 with test binaries, 2 arches) against a
// local docker-registry: cold and warm wall time and request counts, beside the same number of plain
// manifest GETs issued concurrently. Run: npm run bench:payload [-- --runs N --concurrency N]
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
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
const RUNS = numberArg("--runs", 9);
/** The registry client's bound on requests in flight; the plain GETs get the same bound. */
const CONCURRENCY = numberArg("--concurrency", 16);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const ms = (n: number) => `${n.toFixed(1)} ms`;

interface Sample {
  wall: number;
  /** This process's CPU time (user + system): the client's own cost, whatever else loads the machine. */
  cpu: number;
}

async function timed<T>(work: () => Promise<T>): Promise<{ result: T; sample: Sample }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = await work();
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { result, sample: { wall, cpu: (used.user + used.system) / 1000 } };
}

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
    const { result: plan, sample } = await timed(() =>
      resolvePlan({ payload, arch: "amd64", testBinaries, registry }),
    );
    await registry.settled();
    const available = plan.components.filter((c) => c.available).length;
    if (available !== WITH_TESTS)
      throw new Error(`expected ${WITH_TESTS} runnable components, got ${available}`);
    return { sample, requests };
  }

  async function plainGets(count: number, concurrency: number) {
    const limit = pLimit(concurrency);
    const { sample } = await timed(() =>
      Promise.all(
        Array.from({ length: count }, (_, i) =>
          limit(async () => {
            const response = await fetch(manifestUrls[i % manifestUrls.length]!, {
              headers: { accept: MANIFEST_ACCEPT },
            });
            await response.arrayBuffer();
          }),
        ),
      ),
    );
    return sample;
  }

  const cold: Sample[] = [];
  const warm: Sample[] = [];
  const gets: Sample[] = [];
  const unbounded: Sample[] = [];
  let coldRequests = 0;
  let warmRequests = 0;
  // One untimed round first: the registry's own caches and Node's JIT warm up for both sides alike.
  await resolveOnce(await mkdtemp(join(work, "cache-")));
  for (let run = 0; run < RUNS; run++) {
    const cacheDir = await mkdtemp(join(work, "cache-"));
    const first = await resolveOnce(cacheDir);
    cold.push(first.sample);
    coldRequests = first.requests;
    gets.push(await plainGets(first.requests, CONCURRENCY));
    unbounded.push(await plainGets(first.requests, first.requests));
    const again = await resolveOnce(cacheDir);
    warm.push(again.sample);
    warmRequests = Math.max(warmRequests, again.requests);
  }

  const wall = (samples: Sample[]) => median(samples.map((x) => x.wall));
  const cpu = (samples: Sample[]) => median(samples.map((x) => x.cpu));
  const rows: Array<[string, Sample[], number]> = [
    ["cold plan resolution", cold, coldRequests],
    [`${coldRequests} plain manifest GETs, ${CONCURRENCY} at a time`, gets, coldRequests],
    [`${coldRequests} plain manifest GETs, all at once`, unbounded, coldRequests],
    ["warm plan resolution (digest-pinned)", warm, warmRequests],
  ];
  console.log(
    `payload: ${TAGS} tags, ${WITH_TESTS} with test binaries, ${ARCHES.join("+")}; arch amd64; ` +
      `${RUNS} runs, medians; ${cpus().length} CPUs, load average ${loadavg()[0]!.toFixed(1)}`,
  );
  console.log("| case | wall time | client CPU time | HTTP requests |\n| --- | --- | --- | --- |");
  for (const [name, samples, requests] of rows) {
    console.log(`| ${name} | ${ms(wall(samples))} | ${ms(cpu(samples))} | ${requests} |`);
  }
  const ratio = wall(cold) / wall(gets);
  console.log(
    `\ncold / plain GETs (same bound): ${ratio.toFixed(2)}× wall, ${(cpu(cold) / cpu(gets)).toFixed(2)}× CPU (goal ≤ 2×)`,
  );
  console.log(`warm: ${warmRequests} requests (goal 0), ${ms(wall(warm))} (goal < 50 ms)`);
  process.exitCode = ratio <= 2 && warmRequests === 0 && wall(warm) < 50 ? 0 : 1;
} finally {
  await server.stop();
  await rm(work, { recursive: true, force: true });
}
