import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Arch } from "@netstress/core/arch/arch.ts";
import { createGateRoutes, type GateRoutesDeps } from "../../src/gate/gate-routes.ts";
import { createGateStore, gateRunId, type StoredGate } from "../../src/gate/gate-store.ts";
import { createFileTokenSource } from "../../src/gate/gate-tokens.ts";
import { createGatePublisher } from "../../src/gate/publish-gate-run.ts";
import type { RouteHandler } from "../../src/http/route-handler.ts";
import { createReleaseController } from "../../src/payload/release-controller.ts";
import type { Gate, Problem } from "../../src/gate/gate-schemas.ts";
import { createRunQueues } from "../../src/queue/run-queues.ts";
import { createRunStore } from "../../src/queue/run-store.ts";
import { redisKeys } from "../../src/redis/redis-keys.ts";
import { countRedisRoundTrips } from "../helpers/count-redis-round-trips.ts";
import { cutRedisAfter } from "../helpers/cut-redis-after.ts";
import { decideGateArch, testGateDeps } from "../helpers/gate-run-deps.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const TOKEN = "gate-token-0123456789abcdef0123456789abcdef";
const OTHER_TOKEN = "second-token-for-the-release-team";
const CANDIDATE = "quay.io/openshift-release-dev/ocp-release@sha256:" + "c".repeat(64);
// As the release-controller answers it: a tag, the release's name.
const LATEST = "registry.ci.openshift.org/ocp/release:4.19.0-0.nightly-2026-05-20-101112";

async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

let env: Awaited<ReturnType<typeof testGateDeps>>;
let api: { server: Server; url: string };
let releaseController: { server: Server; url: string };
let releaseControllerStatus = 200;
let tokenFile: string;
let removeDir: () => Promise<void>;
/** What every gate API handler of these tests shares (tokens, release-controller, pages). */
let shared: Omit<GateRoutesDeps, "gates" | "runs">;

beforeAll(async () => {
  env = await testGateDeps();
  releaseController = await listen((req, res) => {
    const match = /^\/api\/v1\/releasestream\/([^/]+)\/latest$/.exec(req.url ?? "");
    if (releaseControllerStatus !== 200) return void res.writeHead(releaseControllerStatus).end("broken");
    if (!match || decodeURIComponent(match[1]!) !== "4.19.0-0.nightly")
      return void res.writeHead(404).end("Release stream not found");
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        name: "4.19.0-0.nightly-2026-05-20-101112",
        phase: "Accepted",
        pullSpec: LATEST,
        downloadURL: "",
      }),
    );
  });
  const temp = await tempDir("netstress-gate-api-");
  const dir = temp.path;
  removeDir = temp.remove;
  tokenFile = join(dir, "tokens");
  await writeFile(tokenFile, `# release team\n${TOKEN}\n\n${OTHER_TOKEN}\nshort\n`);
  shared = {
    runSettings: { parallel: 2, timeoutMinutes: 60 },
    tokens: createFileTokenSource({ path: tokenFile, refreshMs: 0 }),
    releaseController: createReleaseController({ baseUrl: releaseController.url }),
    publicUrl: "https://netstress.example.test",
    dataDir: dir,
    log: pino({ level: "silent" }),
  };
  api = await serve(createGateRoutes({ ...shared, gates: env.gates, runs: env.runs }));
});

function serve(handler: RouteHandler): Promise<{ server: Server; url: string }> {
  return listen((req, res) => {
    Promise.resolve(handler(req, res)).then(
      (handled) => handled || res.writeHead(404).end(),
      () => res.writeHead(500).end(),
    );
  });
}

afterAll(async () => {
  await env.close();
  api.server.close();
  releaseController.server.close();
  await removeDir();
});

const body = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify({
    payload: CANDIDATE,
    stream: "4.19.0-0.nightly",
    arches: ["amd64", "arm64"],
    iterations: 20,
    ...overrides,
  });

const post = (payload: string, authorization: string | null = `Bearer ${TOKEN}`, url = api.url) =>
  fetch(`${url}/api/v1/gates`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
    body: payload,
  });

const gateOf = async (response: Response) => (await response.json()) as Gate;
const problemOf = async (response: Response) => (await response.json()) as Problem;

const queuedJobs = async () =>
  (await env.runs.queues.resolve.getJobs(["waiting", "delayed", "active", "completed", "failed"]))
    .map((job) => job.id)
    .sort();

/** The gate API on a connection of its own, under a prefix, built as the bot builds it. */
async function gateApiOn(redis: Redis, prefix: string, newId?: () => string) {
  const store = createRunStore({ redis, prefix });
  const gates = createGateStore({ redis, prefix });
  const queues = createRunQueues({ connection: redis, prefix });
  await queues.resolve.waitUntilReady();
  const runs = {
    ...env.runs,
    store,
    queues,
    publish: createGatePublisher({ gates, runs: store }),
  };
  const handler = createGateRoutes({ ...shared, gates, runs, ...(newId ? { newId } : {}) });
  return { handler, gates, store, queues };
}

/** A gate as the API stores it. */
const storedGate = (arches: Arch[]): StoredGate => ({
  id: randomBytes(16).toString("hex"),
  payload: CANDIDATE,
  baselinePayload: LATEST,
  baselineSource: "request",
  stream: "4.19.0-0.nightly",
  iterations: 7,
  arches,
  createdAt: new Date().toISOString(),
  requestKey: randomBytes(8).toString("hex"),
});

/**
 * The commands of a list that may change what Redis holds: those Redis flags as writes, and
 * scripts, whatever they do (COMMAND INFO: flags third, ACL categories seventh).
 */
async function changingCommands(commands: string[]): Promise<string[]> {
  if (commands.length === 0) return [];
  type Info = [name: string, arity: number, flags: string[], ...rest: unknown[]];
  const infos = (await env.redis.call("COMMAND", "INFO", ...new Set(commands))) as Info[];
  const changing = new Set(
    infos
      .filter(
        ([, , flags, , , , categories]) =>
          flags.includes("write") || (categories as string[]).includes("@scripting"),
      )
      .map(([name]) => name),
  );
  return commands.filter((command) => changing.has(command.toLowerCase()));
}

describe("gate API authentication", () => {
  it.each([
    ["no Authorization header", null],
    ["a wrong token", "Bearer not-the-token-at-all-0000000000"],
    ["a prefix of a valid token", `Bearer ${TOKEN.slice(0, -1)}`],
    ["a valid token with one more character", `Bearer ${TOKEN}x`],
    ["a valid token with its last character changed", `Bearer ${TOKEN.slice(0, -1)}0`],
    ["a line of the file too short to be a token", "Bearer short"],
    ["the comment line of the file", "Bearer # release team"],
    ["another scheme", `Basic ${TOKEN}`],
    ["an empty bearer", "Bearer "],
  ])("refuses %s with 401 and starts nothing", async (_, authorization) => {
    const before = await queuedJobs();
    const response = await post(body({ iterations: 7 }), authorization);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer /);
    expect(await response.json()).toMatchObject({ status: 401, title: "Unauthorized" });
    const read = await fetch(`${api.url}/api/v1/gates/${"0".repeat(32)}`, {
      headers: authorization ? { authorization } : {},
    });
    expect(read.status).toBe(401);
    expect(await queuedJobs()).toEqual(before);
  });

  it("accepts every token of the secret, in any case of the scheme, and picks up a rotated secret", async () => {
    expect((await post(body({ iterations: 8 }), `bearer ${OTHER_TOKEN}`)).status).toBe(202);
    await writeFile(tokenFile, "rotated-token-for-the-release-team\n");
    expect((await post(body({ iterations: 9 }), `Bearer ${TOKEN}`)).status).toBe(401);
    expect((await post(body({ iterations: 9 }), "Bearer rotated-token-for-the-release-team")).status).toBe(
      202,
    );
    await writeFile(tokenFile, `${TOKEN}\n${OTHER_TOKEN}\n`);
  });
});

describe("gate API requests", () => {
  it.each([
    ["a body that is not JSON", "{payload:", "the body is not JSON"],
    ["an unknown field", body({ payloadd: "x" }), "Unrecognized key"],
    [
      "no payload",
      JSON.stringify({ stream: "4.19.0-0.nightly", arches: ["amd64"], iterations: 5 }),
      "payload",
    ],
    ["zero iterations", body({ iterations: 0 }), "iterations"],
    ["fractional iterations", body({ iterations: 2.5 }), "iterations"],
    ["no arches", body({ arches: [] }), "arches"],
    ["an unknown arch", body({ arches: ["x86"] }), "arches.0"],
    ["an arch twice", body({ arches: ["amd64", "amd64"] }), "each arch at most once"],
    ["a local OCI layout", body({ payload: "oci:/srv/payload:release" }), "operator only"],
    ["a stream name with a slash", body({ stream: "../../etc" }), "stream"],
    ["a capability in capitals", body({ capabilities: ["IPv6"] }), "capabilities.0"],
    ["an array", "[]", "(body)"],
  ])("refuses %s with 400 and says what is wrong", async (_, payload, detail) => {
    const before = await queuedJobs();
    const response = await post(payload);
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect((await problemOf(response)).detail).toContain(detail);
    expect(await queuedJobs()).toEqual(before);
  });

  it("refuses a body over 16 KiB with 413", async () => {
    const response = await post(body({ payload: "x".repeat(20_000) }));
    expect(response.status).toBe(413);
  });

  it("refuses a stream the release-controller does not know with 422", async () => {
    const response = await post(body({ stream: "4.99.0-0.nightly" }));
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({
      title: "Unknown release stream",
      issues: [{ path: "stream" }],
    });
  });

  it("answers 502 when the release-controller fails", async () => {
    releaseControllerStatus = 503;
    try {
      const response = await post(body({ iterations: 11 }));
      expect(response.status).toBe(502);
      expect((await problemOf(response)).detail).toContain("503");
    } finally {
      releaseControllerStatus = 200;
    }
  });

  it("starts one gate for concurrent identical requests and gives every caller that gate", async () => {
    const before = await queuedJobs();
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        post(body({ arches: i % 2 ? ["amd64", "arm64"] : ["arm64", "amd64"] })),
      ),
    );
    const gates = await Promise.all(responses.map(gateOf));
    expect(new Set(gates.map((gate) => gate.id)).size).toBe(1);
    expect(responses.map((r) => r.status).sort()).toEqual([
      200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 202,
    ]);
    const id = gates[0]!.id;
    expect(responses[0]!.headers.get("location")).toBe(`https://netstress.example.test/api/v1/gates/${id}`);
    // One run (and its job) per arch, however many callers.
    expect((await queuedJobs()).filter((job) => !before.includes(job))).toEqual(
      [`${gateRunId(id, "amd64")}.0`, `${gateRunId(id, "arm64")}.0`].sort(),
    );

    const read = await fetch(`${api.url}/api/v1/gates/${id}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual({
      id,
      state: "queued",
      payload: CANDIDATE,
      baselinePayload: LATEST,
      baselineSource: "release-controller",
      baselineRelease: "4.19.0-0.nightly-2026-05-20-101112",
      stream: "4.19.0-0.nightly",
      iterations: 20,
      arches: [
        { arch: "amd64", state: "queued", reasons: [] },
        { arch: "arm64", state: "queued", reasons: [] },
      ],
      createdAt: expect.any(String),
      url: `https://netstress.example.test/api/v1/gates/${id}`,
    });
  });

  it("starts a new gate for the same request once the earlier one has completed, with verdicts per arch", async () => {
    const request = body({ baselinePayload: LATEST, arches: ["s390x", "ppc64le"], iterations: 30 });
    const first = await gateOf(await post(request));
    await decideGateArch(env.runs, {
      gateId: first.id,
      arch: "s390x",
      verdict: "Accepted",
      reasons: ["no blocking test got worse"],
    });
    expect((await gateOf(await post(request))).id).toBe(first.id);
    await decideGateArch(env.runs, {
      gateId: first.id,
      arch: "ppc64le",
      verdict: "Rejected",
      reasons: ["1 regression"],
    });

    const finished = await gateOf(
      await fetch(`${api.url}/api/v1/gates/${first.id}`, { headers: { authorization: `Bearer ${TOKEN}` } }),
    );
    expect(finished).toMatchObject({ state: "completed", verdict: "Rejected", baselineSource: "request" });
    expect(finished.arches.map((a) => [a.arch, a.verdict])).toEqual([
      ["ppc64le", "Rejected"],
      ["s390x", "Accepted"],
    ]);
    const second = await post(request);
    expect(second.status).toBe(202);
    expect((await gateOf(second)).id).not.toBe(first.id);
  });

  it("keeps gates that require different build-farm capabilities apart, and shows what each requires", async () => {
    const request = { baselinePayload: LATEST, arches: ["amd64"], iterations: 12 };
    const plain = await gateOf(await post(body(request)));
    const ipv6 = await gateOf(await post(body({ ...request, capabilities: ["ovn-ic", "ipv6"] })));
    const again = await post(body({ ...request, capabilities: ["ipv6", "ovn-ic", "ipv6"] }));
    expect(new Set([plain.id, ipv6.id]).size).toBe(2);
    expect(again.status).toBe(200);
    expect((await gateOf(again)).id).toBe(ipv6.id);
    expect(ipv6.capabilities).toEqual(["ipv6", "ovn-ic"]);
    expect(plain).not.toHaveProperty("capabilities");
  });

  it("reads a gate without changing anything in Redis, even a gate an older version stored without its runs", async () => {
    const connection = new Redis(inject("redisUrl"), { maxRetriesPerRequest: null });
    const own = await gateApiOn(connection, env.prefix);
    const served = await serve(own.handler);
    try {
      const started = await gateOf(await post(body({ iterations: 13 })));
      // An older version stored the gate, then its runs: it died in between.
      const legacy = { ...storedGate(["amd64"]), requestKey: "stored-without-runs" };
      const keys = redisKeys(env.prefix);
      await env.redis.hset(keys.gate(legacy.id), "gate", JSON.stringify(legacy));
      await env.redis.set(keys.activeGate(legacy.requestKey), legacy.id);
      const jobsBefore = await queuedJobs();
      const trips = countRedisRoundTrips(connection);

      const reads = await Promise.all(
        [started.id, legacy.id].map((id) =>
          fetch(`${served.url}/api/v1/gates/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } }),
        ),
      );

      expect(reads.map((read) => read.status)).toEqual([200, 200]);
      expect((await gateOf(reads[1]!)).arches).toEqual([{ arch: "amd64", state: "queued", reasons: [] }]);
      expect(await changingCommands(trips.trips.flat())).toEqual([]);
      expect(await queuedJobs()).toEqual(jobsBefore);
      expect(await env.runs.store.get(gateRunId(legacy.id, "amd64"))).toBeUndefined();
    } finally {
      served.server.close();
      await own.queues.close();
      await connection.quit();
    }
  });

  it("leaves nothing or the gate with all its runs wherever the process stops, and the request sent again queues them", async () => {
    const arches: Arch[] = ["amd64", "arm64"];
    const request = body({ arches, iterations: 14 });
    const left = new Set<string>();
    const stopped = new Set<string>();
    for (let trips = 0; ; trips++) {
      // Each stop point gets a Redis prefix of its own: what one left cannot hide what another left.
      const prefix = `${env.prefix}-stop-${trips}`;
      const id = randomBytes(16).toString("hex");
      const dying = new Redis(inject("redisUrl"), { maxRetriesPerRequest: null });
      const healthy = new Redis(inject("redisUrl"), { maxRetriesPerRequest: null });
      // The first request's gate gets `id`; any later one a new id, as every request does.
      const ids = [id];
      const newId = () => ids.shift() ?? randomBytes(16).toString("hex");
      const doomed = await gateApiOn(dying, prefix, newId);
      const after = await gateApiOn(healthy, prefix, newId);
      const cut = cutRedisAfter(dying, trips);
      const served = await serve(doomed.handler);
      try {
        const first = await post(request, `Bearer ${TOKEN}`, served.url);
        await cut.settled();

        const gateStored = (await after.gates.get(id)) !== undefined;
        const runsStored = [];
        for (const arch of arches) if (await after.store.get(gateRunId(id, arch))) runsStored.push(arch);
        expect({ trips, gateStored, runsStored }).toEqual({
          trips,
          gateStored,
          runsStored: gateStored ? arches : [],
        });
        left.add(gateStored ? "the gate with its runs" : "nothing");

        const retried = await serve(after.handler);
        let standing: string;
        try {
          const again = await post(request, `Bearer ${TOKEN}`, retried.url);
          expect(again.status).toBe(gateStored ? 200 : 202);
          standing = (await gateOf(again)).id;
        } finally {
          retried.server.close();
        }
        if (gateStored) expect(standing).toBe(id);
        const queued = await after.queues.resolve.getJobs(["waiting", "delayed", "active"]);
        expect(queued.map((job) => job.id).sort()).toEqual(
          arches.map((arch) => `${gateRunId(standing, arch)}.0`).sort(),
        );
        if (!cut.cut) {
          expect(first.status).toBe(202);
          break;
        }
        // The caller is told to send it again, which the request above just did.
        stopped.add(`${first.status} ${await first.text()}`);
      } finally {
        served.server.close();
        await Promise.all([doomed.queues.close(), after.queues.close()]);
        dying.disconnect();
        await healthy.quit();
      }
    }
    // Stops before and after the gate was stored were both tried.
    expect([...left].sort()).toEqual(["nothing", "the gate with its runs"]);
    for (const answer of stopped)
      expect(answer).toMatch(/^503 .*the gate could not be queued; send the request again/s);
  });

  it("answers 404 for gates that do not exist and for other API paths", async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect((await fetch(`${api.url}/api/v1/gates/${"f".repeat(32)}`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${api.url}/api/v1/gates/not-an-id`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${api.url}/api/v1/gates`, { headers: auth })).status).toBe(405);
  });
});

describe("gate API description", () => {
  it("serves the OpenAPI document committed in schemas/, without a token", async () => {
    const response = await fetch(`${api.url}/api/v1/openapi.json`);
    expect(response.status).toBe(200);
    const committed = await readFile(new URL("../../schemas/gate-api.openapi.json", import.meta.url), "utf8");
    // Regenerate with: npx tsx schemas/generate.ts
    expect(await response.text()).toBe(committed);
    const document = JSON.parse(committed);
    expect(Object.keys(document.paths)).toEqual([
      "/api/v1/gates",
      "/api/v1/gates/{id}",
      "/api/v1/openapi.json",
    ]);
    expect(Object.keys(document.paths["/api/v1/gates"].post.responses)).toContain("503");
    expect(document.components.schemas.GateRequest.required).toEqual([
      "payload",
      "stream",
      "arches",
      "iterations",
    ]);
    expect(document.components.schemas.GateArch.properties.verdict.enum).toEqual([
      "Accepted",
      "Rejected",
      "Inconclusive",
    ]);
  });
});
