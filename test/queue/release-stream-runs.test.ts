import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReleaseController } from "../../src/payload/release-controller.ts";
import { createRegistry, type Registry } from "../../src/registry/create-registry.ts";
import { createPayloadPlanResolver } from "../../src/queue/payload-plan-resolver.ts";
import { runRecord } from "../helpers/github-run-deps.ts";
import { tempDir } from "../helpers/temp-dir.ts";

// A loopback port nothing listens on: the registry look-up fails at once, on this machine.
const LATEST = "127.0.0.1:9/ocp/release:4.19.0-0.nightly-7";
let server: Server;
let status = 200;
let url: string;
let cache: Awaited<ReturnType<typeof tempDir>>;
let registry: Registry;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (status !== 200) return void res.writeHead(status).end();
    if (!req.url?.startsWith("/api/v1/releasestream/4.19.0-0.nightly/")) return void res.writeHead(404).end();
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ name: "4.19.0-0.nightly-7", pullSpec: LATEST }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cache = await tempDir("netstress-stream-runs-");
  registry = await createRegistry({ cacheDir: cache.path });
});
afterAll(async () => {
  server.close();
  await cache.remove();
});

const streamRun = (stream: string) => {
  const { source } = runRecord();
  return runRecord({ source: { ...source, tags: [], releaseStream: stream } });
};

describe("PR runs of a repository with release_stream", () => {
  const resolver = () =>
    createPayloadPlanResolver({
      registry,
      releaseController: createReleaseController({ baseUrl: url }),
    });

  it("are planned from the stream's latest payload", async () => {
    const resolution = await resolver()({
      run: streamRun("4.19.0-0.nightly"),
      signal: AbortSignal.timeout(30_000),
    });
    expect(resolution).toMatchObject({ kind: "unavailable", conclusion: "failure" });
    expect(resolution.kind === "unavailable" && resolution.reason).toContain("127.0.0.1:9/ocp/release");
  });

  it("ask for action when the stream is unknown, and fail when the release-controller does", async () => {
    expect(
      await resolver()({ run: streamRun("4.99.0-0.nightly"), signal: AbortSignal.timeout(30_000) }),
    ).toEqual({
      kind: "unavailable",
      conclusion: "action_required",
      reason: 'the release-controller knows no release stream "4.99.0-0.nightly"',
    });
    status = 502;
    try {
      expect(
        await resolver()({ run: streamRun("4.19.0-0.nightly"), signal: AbortSignal.timeout(30_000) }),
      ).toMatchObject({
        kind: "unavailable",
        conclusion: "failure",
        reason: expect.stringContaining("answered 502"),
      });
    } finally {
      status = 200;
    }
  });

  it("ask for action when the bot has no release-controller", async () => {
    const resolution = await createPayloadPlanResolver({ registry })({
      run: streamRun("4.19.0-0.nightly"),
      signal: AbortSignal.timeout(30_000),
    });
    expect(resolution).toMatchObject({
      kind: "unavailable",
      conclusion: "action_required",
      reason: expect.stringContaining("no release-controller configured"),
    });
  });
});
