import { readFile, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSampleBinaries } from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import { REGRESSED_TEST } from "@netstress/testbed/sample-ext/suites.ts";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { createLocalExecutor } from "../../src/farm/local-executor.ts";
import { createGateRoutes } from "../../src/gate/gate-routes.ts";
import type { Gate } from "../../src/gate/gate-schemas.ts";
import { createFileTokenSource } from "../../src/gate/gate-tokens.ts";
import { createHistoryStore, type HistoryStore } from "../../src/history/history-store.ts";
import { createRunAnalyzer } from "../../src/history/run-analyzer.ts";
import { createReleaseController } from "../../src/payload/release-controller.ts";
import { createPayloadPlanResolver } from "../../src/queue/payload-plan-resolver.ts";
import { startWorkers, type Workers } from "../../src/queue/start-workers.ts";
import { createRegistry } from "../../src/registry/create-registry.ts";
import { testGateDeps } from "../helpers/gate-run-deps.ts";
import { eventually } from "../helpers/github-api.ts";
import { pushPayload } from "../helpers/oci-push-payload.ts";
import { startRegistry, type RegistryServer } from "../helpers/start-registry.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { localImages } from "../helpers/local-images.ts";

const TOKEN = "end-to-end-gate-token-0123456789";
const STREAM = "4.20.0-0.nightly";
const arch = hostArch();

let registry: RegistryServer;
let dir: Awaited<ReturnType<typeof tempDir>>;
let env: Awaited<ReturnType<typeof testGateDeps>>;
let workers: Workers;
let history: HistoryStore;
let api: Server;
let apiUrl: string;
let releaseController: Server;
let released: string;
let candidate: string;

beforeAll(async () => {
  dir = await tempDir("netstress-gate-e2e-");
  registry = await startRegistry();
  const binaries = await buildSampleBinaries({ outDir: join(dir.path, "binaries"), gzip: true });
  const common = { url: registry.url, host: registry.host, repository: "ocp/release", arches: [arch] };
  released = (
    await pushPayload({
      ...common,
      name: `${STREAM}-2026-05-20-101112`,
      components: [{ tag: "ovn-kubernetes", binary: await readFile(binaries.released["ovn-kubernetes"]) }],
    })
  ).payload;
  // The candidate carries the sample's regressed ovn-kubernetes build.
  candidate = (
    await pushPayload({
      ...common,
      name: `${STREAM}-2026-05-21-090000`,
      releaseTag: "candidate",
      components: [
        {
          tag: "ovn-kubernetes",
          binary: await readFile(binaries.pr["ovn-kubernetes"]),
          commit: "c".repeat(40),
        },
      ],
    })
  ).payload;

  releaseController = createServer((req, res) => {
    if (req.url !== `/api/v1/releasestream/${STREAM}/latest`) return void res.writeHead(404).end();
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ name: `${STREAM}-2026-05-20-101112`, pullSpec: released, phase: "Accepted" }));
  });
  await new Promise<void>((resolve) => releaseController.listen(0, "127.0.0.1", resolve));

  env = await testGateDeps();
  const { redis, prefix, runs } = env;
  history = createHistoryStore({ redis, prefix });
  const log = runs.log;
  const dataDir = join(dir.path, "data");
  const executor = createLocalExecutor({
    arches: [arch],
    cacheDir: join(dir.path, "unpacked"),
    images: await localImages(join(dir.path, "images")),
    // Fixed outcomes of the sample tests, instantly.
    env: { ...process.env, SAMPLE_EXT_SEED: "gate-e2e", SAMPLE_EXT_TIME_SCALE: "0" },
  });
  const cacheDir = join(dir.path, "cache");
  workers = startWorkers({
    connection: redis,
    prefix,
    deps: runs,
    intake: async () => {},
    resolve: {
      executor,
      resolvePlan: createPayloadPlanResolver({ registry: await createRegistry({ cacheDir }) }),
    },
    execute: { executor, analyze: createRunAnalyzer({ history, log }), dataDir },
    executeConcurrency: 1,
  });
  await writeFile(join(dir.path, "tokens"), `${TOKEN}\n`);
  const routes = createGateRoutes({
    gates: env.gates,
    runs,
    runSettings: { parallel: 8, timeoutMinutes: 10 },
    tokens: createFileTokenSource({ path: join(dir.path, "tokens") }),
    releaseController: createReleaseController({
      baseUrl: `http://127.0.0.1:${(releaseController.address() as AddressInfo).port}`,
    }),
    publicUrl: "http://bot.test",
    dataDir,
    log,
  });
  api = createServer(
    (req, res) =>
      void Promise.resolve(routes(req, res)).then((handled) => handled || res.writeHead(404).end()),
  );
  await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await workers?.close();
  await env?.close();
  api?.close();
  releaseController?.close();
  await registry?.stop();
  await dir?.remove();
});

describe("a gate, end to end", () => {
  it("rejects a candidate payload whose ovn-kubernetes tests regressed against the stream's latest", async () => {
    const started = await fetch(`${apiUrl}/api/v1/gates`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ payload: candidate, stream: STREAM, arches: [arch], iterations: 8 }),
    });
    expect(started.status).toBe(202);
    const { id } = (await started.json()) as Gate;
    const gate = await eventually(async () => {
      const read = await fetch(`${apiUrl}/api/v1/gates/${id}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      const body = (await read.json()) as Gate;
      return body.state === "completed" && body;
    }, 120_000);
    expect(gate).toMatchObject({
      verdict: "Rejected",
      baselinePayload: released,
      baselineSource: "release-controller",
    });
    const [result] = gate.arches;
    expect(result).toMatchObject({
      arch,
      verdict: "Rejected",
      reportUrl: `http://bot.test/gates/${id}/${arch}/report`,
    });
    expect(result!.reasons.join("\n")).toContain(REGRESSED_TEST);

    const report = await fetch(`${apiUrl}/gates/${id}/${arch}/report`);
    expect(report.status).toBe(200);
    expect(await report.text()).toContain("NodePort service should be reachable");
    // The released payload's 8 iterations joined the stream's pool; the rejected candidate did not.
    const pool = await history.read({ stream: STREAM, arch });
    expect(pool.runs).toBe(1);
    expect(pool.tests.find((t) => t.name === REGRESSED_TEST)?.runs).toBe(8);
  }, 180_000);
});
