// Discovery over a generated payload of 190 tags (2 arches; 20 binaries at the conventional path of
// tags no table lists, 10 as tests-extension referrers through the sha256- tag fallback, 160 tags
// without tests) against a local docker-registry: cold and warm wall time and request counts, beside
// the same number of plain manifest GETs issued concurrently, and a next payload version that shares
// every component. Run: bash bench/payload/run.sh [--runs N --concurrency N]
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
import { buildReleaseImage } from "@netstress/testbed/sample-payload/build-release-image.ts";
import { pushImage } from "../../test/helpers/oci-push-image.ts";
import { pushPayload, type PayloadComponentSpec } from "../../test/helpers/oci-push-payload.ts";
import { pushReferrer } from "../../test/helpers/oci-push-referrer.ts";
import { startRegistry } from "../../test/helpers/start-registry.ts";

const TAGS = 190;
/** Tags with a binary at /usr/bin/<tag>-tests-ext.gz; the next REFERRERS ship theirs as referrers. */
const AT_CONVENTION = 20;
const REFERRERS = 10;
const WITH_TESTS = AT_CONVENTION + REFERRERS;
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
  // A small gzipped binary that does not compress away, so that layers cost what bytes cost.
  const binary = () => gzipSync(randomBytes(64 * 1024));
  const components: PayloadComponentSpec[] = Array.from({ length: TAGS }, (_, i) => {
    const tag = `component-${String(i).padStart(3, "0")}`;
    return i < AT_CONVENTION ? { tag, binary: binary() } : { tag };
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
  for (const spec of components.slice(AT_CONVENTION, WITH_TESTS)) {
    const subject = pushed.pullspecs.get(spec.tag)!.split("@")[1]!;
    const index = await fetch(`${server.url}/v2/ocp/release/manifests/${subject}`, {
      headers: { accept: MANIFEST_ACCEPT },
    });
    const bytes = Buffer.from(await index.arrayBuffer());
    await pushReferrer({
      url: server.url,
      repository: "ocp/release",
      subject: { digest: subject, mediaType: index.headers.get("content-type")!, size: bytes.length },
      artifactType: "application/vnd.openshift.tests-extension.v1+gzip",
      title: `${spec.tag}-tests-ext.gz`,
      content: binary(),
    });
  }
  // The next payload version: a new release image over the very same component images.
  const next = await buildReleaseImage({
    name: "4.20.0-0.bench-next",
    arches: ARCHES,
    tags: components.map((c) => ({
      tag: c.tag,
      pullspec: pushed.pullspecs.get(c.tag)!,
      commit: `${c.tag}-commit`.padEnd(40, "0"),
      sourceLocation: `https://github.com/openshift/${c.tag}`,
    })),
  });
  await pushImage({ url: server.url, repository: "ocp/release", tag: "next", image: next });
  const nextPayload = `${server.host}/ocp/release@${next.manifest.digest}`;
  console.error(
    `pushed ${TAGS} components × ${ARCHES.length} arches in ${ms(performance.now() - pushStart)}`,
  );

  const manifestUrls = [...pushed.pullspecs.values()].map((pullspec) => {
    const [name, digest] = pullspec.split("@");
    return `${server.url}/v2/${name!.slice(server.host.length + 1)}/manifests/${digest}`;
  });

  async function resolveOnce(cacheDir: string, reference = payload) {
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
      resolvePlan({ payload: reference, arch: "amd64", registry }),
    );
    await registry.settled();
    const found = (by: string) => plan.components.filter((c) => c.available && c.discoveredBy === by).length;
    if (found("convention") !== AT_CONVENTION || found("referrer") !== REFERRERS)
      throw new Error(
        `expected ${AT_CONVENTION} components by convention and ${REFERRERS} by referrer, got ${found("convention")} and ${found("referrer")}`,
      );
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
  const nextVersion: Sample[] = [];
  let nextRequests = 0;
  const gets: Sample[] = [];
  const unbounded: Sample[] = [];
  const perTag: Sample[] = [];
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
    perTag.push(await plainGets(TAGS, CONCURRENCY));
    const again = await resolveOnce(cacheDir);
    warm.push(again.sample);
    warmRequests = Math.max(warmRequests, again.requests);
    const following = await resolveOnce(cacheDir, nextPayload);
    nextVersion.push(following.sample);
    nextRequests = Math.max(nextRequests, following.requests);
  }

  const wall = (samples: Sample[]) => median(samples.map((x) => x.wall));
  const cpu = (samples: Sample[]) => median(samples.map((x) => x.cpu));
  const rows: Array<[string, Sample[], number]> = [
    ["cold discovery", cold, coldRequests],
    [`${coldRequests} plain manifest GETs, ${CONCURRENCY} at a time`, gets, coldRequests],
    [`${coldRequests} plain manifest GETs, all at once`, unbounded, coldRequests],
    [`${TAGS} plain manifest GETs (one per tag), ${CONCURRENCY} at a time`, perTag, TAGS],
    ["warm discovery (digest-pinned)", warm, warmRequests],
    ["next payload version, same components, warm cache", nextVersion, nextRequests],
  ];
  console.log(
    `payload: ${TAGS} tags, ${AT_CONVENTION} binaries at the convention + ${REFERRERS} as referrers, ${ARCHES.join("+")}; arch amd64; ` +
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
  console.log(
    `cold / one GET per tag: ${(wall(cold) / wall(perTag)).toFixed(2)}× wall; ${(coldRequests / TAGS).toFixed(2)} requests per tag`,
  );
  console.log(`warm: ${warmRequests} requests (goal 0), ${ms(wall(warm))} (goal < 50 ms)`);
  process.exitCode = ratio <= 2 && warmRequests === 0 && wall(warm) < 50 ? 0 : 1;
} finally {
  await server.stop();
  await rm(work, { recursive: true, force: true });
}
