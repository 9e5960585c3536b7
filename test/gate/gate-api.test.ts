import { readFile, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGateRoutes } from "../../src/gate/gate-routes.ts";
import { gateRunId } from "../../src/gate/gate-store.ts";
import { createFileTokenSource } from "../../src/gate/gate-tokens.ts";
import { createReleaseController } from "../../src/payload/release-controller.ts";
import type { Gate, Problem } from "../../src/gate/gate-schemas.ts";
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
  const handler = createGateRoutes({
    gates: env.gates,
    runs: env.runs,
    runSettings: { parallel: 2, timeoutMinutes: 60 },
    tokens: createFileTokenSource({ path: tokenFile, refreshMs: 0 }),
    releaseController: createReleaseController({ baseUrl: releaseController.url }),
    publicUrl: "https://netstress.example.test",
    dataDir: dir,
    log: pino({ level: "silent" }),
  });
  api = await listen((req, res) => {
    Promise.resolve(handler(req, res)).then(
      (handled) => handled || res.writeHead(404).end(),
      () => res.writeHead(500).end(),
    );
  });
});

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

const post = (payload: string, authorization: string | null = `Bearer ${TOKEN}`) =>
  fetch(`${api.url}/api/v1/gates`, {
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

  it("accepts the runs of an active gate that a stopped process stored but never queued, when it is read", async () => {
    const gate = {
      id: "ab".repeat(16),
      payload: CANDIDATE,
      baselinePayload: LATEST,
      baselineSource: "request" as const,
      stream: "4.19.0-0.nightly",
      iterations: 7,
      arches: ["amd64" as const],
      createdAt: new Date().toISOString(),
      requestKey: "stored-never-queued",
    };
    await env.gates.createOrJoin(gate);
    const read = await fetch(`${api.url}/api/v1/gates/${gate.id}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(read.status).toBe(200);
    expect(await queuedJobs()).toContain(`${gateRunId(gate.id, "amd64")}.0`);

    // A gate that is no longer active (its runs ended, or it predates gates as runs) is not run again.
    const old = { ...gate, id: "cd".repeat(16), requestKey: "released" };
    await env.gates.createOrJoin(old);
    await env.gates.release(old);
    await fetch(`${api.url}/api/v1/gates/${old.id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(await queuedJobs()).not.toContain(`${gateRunId(old.id, "amd64")}.0`);
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
