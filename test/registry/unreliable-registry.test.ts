import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { getEventListeners } from "node:events";
import { createServer as createTcpServer, type Socket } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  buildImage,
  buildLayer,
  type ImageBundle,
} from "@netstress/testbed/sample-payload/oci-image-builder.ts";
import {
  createDistributionClient,
  type DistributionClientOptions,
} from "../../src/registry/distribution-client.ts";
import { createRegistry } from "../../src/registry/create-registry.ts";
import { parseImageReference, type RegistryImageReference } from "../../src/registry/image-reference.ts";

type Handler = (req: IncomingMessage, res: ServerResponse, port: number) => void;

let work: string;
let image: ImageBundle;
const servers: Array<Server | ReturnType<typeof createTcpServer>> = [];
const sockets = new Set<Socket>();

/** A loopback HTTP server speaking just enough of the distribution API to misbehave on purpose. */
async function serve(handler: Handler): Promise<{ host: string; requests: string[] }> {
  const requests: string[] = [];
  const server = createHttpServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    handler(req, res, (server.address() as { port: number }).port);
  });
  server.on("connection", (socket) => sockets.add(socket));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { host: `127.0.0.1:${(server.address() as { port: number }).port}`, requests };
}

function sendManifest(res: ServerResponse) {
  res.writeHead(200, {
    "content-type": image.manifest.mediaType,
    "docker-content-digest": image.manifest.digest,
  });
  res.end(image.manifest.bytes);
}

// A generous timeout where answers do come (a loaded machine must not turn them into retries).
const fastRetries: DistributionClientOptions = { timeoutMs: 5000, retry: { retries: 2, backoffMs: 1 } };
const manifestOf = (host: string, extra: DistributionClientOptions = {}) =>
  createDistributionClient({ ...fastRetries, ...extra }).getManifest(
    parseImageReference(`${host}/ns/app:v1`) as RegistryImageReference,
  );

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "netstress-unreliable-"));
  image = buildImage({
    arch: "amd64",
    layers: [await buildLayer([{ path: "usr/bin/app-tests-ext.gz", content: "bin" }])],
  });
});
afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});
afterAll(() => rm(work, { recursive: true, force: true }));

describe("registry client against unreliable servers", () => {
  it("answers a bearer challenge with a token fetched from the realm, sending the pull secret there", async () => {
    let tokenRequest: URL | undefined;
    let tokenAuthorization: string | undefined;
    const { host } = await serve((req, res, port) => {
      if (req.url?.startsWith("/token")) {
        tokenRequest = new URL(req.url, "http://x");
        tokenAuthorization = req.headers.authorization;
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ token: "tok-123" }));
      } else if (req.headers.authorization === "Bearer tok-123") sendManifest(res);
      else {
        res.writeHead(401, {
          "www-authenticate": `Bearer realm="http://127.0.0.1:${port}/token",service="fake-registry",scope="repository:ns/app:pull"`,
        });
        res.end();
      }
    });
    const manifest = await manifestOf(host, { credentials: () => ({ username: "robot", password: "pw" }) });
    expect(manifest.digest).toBe(image.manifest.digest);
    expect(tokenRequest?.searchParams.get("service")).toBe("fake-registry");
    expect(tokenRequest?.searchParams.get("scope")).toBe("repository:ns/app:pull");
    expect(tokenAuthorization).toBe(`Basic ${Buffer.from("robot:pw").toString("base64")}`);
  });

  it("retries 429 and 503 answers with backoff and then succeeds", async () => {
    let calls = 0;
    const { host, requests } = await serve((_req, res) => {
      calls++;
      if (calls === 1) res.writeHead(429, { "retry-after": "0" }).end("slow down");
      else if (calls === 2) res.writeHead(503).end("busy");
      else sendManifest(res);
    });
    expect((await manifestOf(host)).digest).toBe(image.manifest.digest);
    expect(requests).toHaveLength(3);
  });

  it("leaves no listener on the caller's signal after retries, however many requests share it", async () => {
    let calls = 0;
    const { host } = await serve((_req, res) => {
      if (++calls % 3 !== 0) res.writeHead(503).end("busy");
      else sendManifest(res);
    });
    const shared = new AbortController().signal;
    const client = createDistributionClient(fastRetries);
    const ref = parseImageReference(`${host}/ns/app:v1`) as RegistryImageReference;
    for (let i = 0; i < 4; i++) await client.getManifest(ref, { signal: shared });
    expect(calls).toBe(12);
    expect(getEventListeners(shared, "abort")).toHaveLength(0);
  });

  it("retries a dropped connection", async () => {
    let calls = 0;
    const { host } = await serve((req, res) => {
      if (++calls === 1) req.socket.destroy();
      else sendManifest(res);
    });
    expect((await manifestOf(host)).digest).toBe(image.manifest.digest);
  });

  it("gives up on a registry that keeps failing, saying how often it tried", async () => {
    const { host, requests } = await serve((_req, res) => void res.writeHead(502).end());
    await expect(manifestOf(host)).rejects.toThrow(/answered 502 \(gave up after 3 attempts\)/);
    expect(requests).toHaveLength(3);
  });

  it("reports 403 as forbidden without retrying", async () => {
    const { host, requests } = await serve((_req, res) => void res.writeHead(403).end());
    await expect(manifestOf(host)).rejects.toMatchObject({ code: "forbidden" });
    expect(requests).toHaveLength(1);
  });

  it("times out on a registry that accepts connections and never answers", async () => {
    const silent = createTcpServer((socket) => sockets.add(socket));
    servers.push(silent);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const host = `127.0.0.1:${(silent.address() as { port: number }).port}`;
    const started = Date.now();
    const attempt = manifestOf(host, { timeoutMs: 200, retry: { retries: 1, backoffMs: 1 } });
    await expect(attempt).rejects.toMatchObject({ code: "timeout" });
    await expect(attempt).rejects.toThrow(
      /no answer from 127\.0\.0\.1:\d+ within 200 ms \(gave up after 2 attempts\)/,
    );
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("times out when a body stalls half way", async () => {
    const { host } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": image.manifest.mediaType });
      res.write(image.manifest.bytes.subarray(0, 10));
    });
    await expect(
      manifestOf(host, { timeoutMs: 300, retry: { retries: 0, backoffMs: 1 } }),
    ).rejects.toMatchObject({
      code: "timeout",
    });
  });

  it("refuses a manifest whose bytes do not match the digest it was asked for", async () => {
    const { host } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": image.manifest.mediaType });
      res.end(image.manifest.bytes.toString().replace("amd64", "amd64 "));
    });
    const registry = await createRegistry({
      cacheDir: await mkdtemp(join(work, "cache-")),
      client: createDistributionClient(fastRetries),
    });
    const attempt = registry.resolveImage({
      reference: `${host}/ns/app@${image.manifest.digest}`,
      arch: "amd64",
    });
    await expect(attempt).rejects.toMatchObject({ code: "digest-mismatch" });
    await expect(attempt).rejects.toThrow(/refusing to use it/);
  });
});
