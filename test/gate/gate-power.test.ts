import { writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGateRoutes } from "../../src/gate/gate-routes.ts";
import type { Gate } from "../../src/gate/gate-schemas.ts";
import { gateRunId } from "../../src/gate/gate-store.ts";
import { createFileTokenSource } from "../../src/gate/gate-tokens.ts";
import { createReleaseController } from "../../src/payload/release-controller.ts";
import { createPowerPlanner, type PlanRunPower } from "../../src/queue/power-planner.ts";
import { processResolve } from "../../src/queue/process-resolve.ts";
import { powerLine } from "../../src/runs/power-line.ts";
import type { ShardExecutor } from "../../src/runs/shard-executor.ts";
import { bothArmsPlan } from "../helpers/both-arms-plan.ts";
import { testGateDeps } from "../helpers/gate-run-deps.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const TOKEN = "gate-power-token-0123456789abcdef0123";
const CANDIDATE = "quay.io/openshift-release-dev/ocp-release@sha256:" + "c".repeat(64);
const LATEST = "registry.ci.openshift.org/ocp/release:4.19.0-0.nightly-2026-05-20-101112";

let env: Awaited<ReturnType<typeof testGateDeps>>;
let api: Server;
let apiUrl: string;
let releaseController: Server;
let removeDir: () => Promise<void>;

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

beforeAll(async () => {
  env = await testGateDeps();
  releaseController = createServer((_, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({ name: "4.19.0-0.nightly-2026-05-20-101112", phase: "Accepted", pullSpec: LATEST }),
    );
  });
  const releaseControllerUrl = await listen(releaseController);
  const temp = await tempDir("netstress-gate-power-");
  removeDir = temp.remove;
  const tokenFile = join(temp.path, "tokens");
  await writeFile(tokenFile, `${TOKEN}\n`);
  const handler = createGateRoutes({
    gates: env.gates,
    runs: env.runs,
    runSettings: { parallel: 2, timeoutMinutes: 60 },
    tokens: createFileTokenSource({ path: tokenFile, refreshMs: 0 }),
    releaseController: createReleaseController({ baseUrl: releaseControllerUrl }),
    publicUrl: "https://netstress.example.test",
    dataDir: temp.path,
    log: pino({ level: "silent" }),
  });
  api = createServer((req, res) => {
    Promise.resolve(handler(req, res)).then(
      (handled) => handled || res.writeHead(404).end(),
      () => res.writeHead(500).end(),
    );
  });
  apiUrl = await listen(api);
});

afterAll(async () => {
  await env.close();
  api.close();
  releaseController.close();
  await removeDir();
});

const authorized = { authorization: `Bearer ${TOKEN}` };
const getGate = async (id: string) =>
  (await (await fetch(`${apiUrl}/api/v1/gates/${id}`, { headers: authorized })).json()) as Gate;

describe("a gate says what its design can see", () => {
  it("plans it once when its run is resolved, and a GET shows the stored answer without simulating", async () => {
    const response = await fetch(`${apiUrl}/api/v1/gates`, {
      method: "POST",
      headers: { ...authorized, "content-type": "application/json" },
      body: JSON.stringify({
        payload: CANDIDATE,
        stream: "4.19.0-0.nightly",
        arches: ["amd64"],
        iterations: 16,
        clusters: 4,
      }),
    });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as Gate;
    expect((await getGate(id)).arches[0]!.power).toBeUndefined();

    // The real planner, counted: the resolve stage is where a gate's run is planned.
    let simulations = 0;
    const planner = createPowerPlanner({ redis: env.redis, prefix: env.prefix, log: env.runs.log });
    const plan: PlanRunPower = (input) => {
      simulations++;
      return planner(input);
    };
    const executor: ShardExecutor = {
      name: "never",
      arches: async () => ["amd64"],
      execute: async () => ({ status: "cancelled", resultsPath: "/none", records: 0 }),
    };
    await processResolve(
      env.runs,
      {
        executor,
        resolvePlan: bothArmsPlan(),
        power: { plan, clusterSource: () => ({ moves: false }) },
      },
      gateRunId(id, "amd64"),
    );
    expect(simulations).toBe(1);

    const stored = await env.runs.store.get(gateRunId(id, "amd64"));
    const [first, second] = [await getGate(id), await getGate(id)];
    expect(simulations).toBe(1);
    for (const gate of [first, second]) {
      const { power } = gate.arches[0]!;
      // 16 iterations over 4 clusters per arm, each arm on its own; gates are held to 2% → 10%.
      expect(power).toMatchObject({
        design: { kind: "separate", clustersPerArm: 4, iterationsPerCluster: 4 },
        target: { from: 0.02, to: 0.1 },
      });
      expect(power!.line).toBe(powerLine(stored!.power!));
      expect(power!.line).toMatch(
        /^This run can see .* on a clean test, .* with 80% power \(4 clusters × 4 iterations per arm, separate clusters, .*\); for 2% → 10% you need /,
      );
    }
  }, 60_000);
});
