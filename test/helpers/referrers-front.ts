import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { MEDIA_TYPES } from "../../src/registry/manifest.ts";

export interface ReferrersFront {
  host: string;
  url: string;
  /** Paths (with query) of every request the front answered or passed on. */
  requests: string[];
  stop(): Promise<void>;
}

const REFERRERS = /^\/v2\/(.+)\/referrers\/(sha256:[a-f0-9]{64})$/;

/**
 * An HTTP front for a distribution 2.x registry that adds the OCI 1.1 referrers API: it answers
 * `GET /v2/<name>/referrers/<digest>` from the registry's `sha256-<hex>` tag (an empty list when
 * there is none), `pageSize` entries a page with `Link: <…>; rel="next"`, and passes everything
 * else through unchanged.
 */
export async function startReferrersFront(options: {
  upstream: string;
  pageSize?: number;
}): Promise<ReferrersFront> {
  const requests: string[] = [];
  const pageSize = options.pageSize ?? 100;

  async function referrers(response: ServerResponse, name: string, digest: string, url: URL) {
    const upstream = await fetch(`${options.upstream}/v2/${name}/manifests/${digest.replace(":", "-")}`, {
      headers: { accept: MEDIA_TYPES.ociIndex },
    });
    const all = upstream.ok ? ((await upstream.json()) as { manifests: object[] }).manifests : [];
    const page = Number(url.searchParams.get("page") ?? "0");
    const manifests = all.slice(page * pageSize, (page + 1) * pageSize);
    const headers: Record<string, string> = { "content-type": MEDIA_TYPES.ociIndex };
    if ((page + 1) * pageSize < all.length)
      headers.link = `</v2/${name}/referrers/${digest}?page=${page + 1}>; rel="next"`;
    response.writeHead(200, headers);
    response.end(JSON.stringify({ schemaVersion: 2, mediaType: MEDIA_TYPES.ociIndex, manifests }));
  }

  async function pass(request: IncomingMessage, response: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter(
        (e): e is [string, string] => typeof e[1] === "string" && e[0] !== "host",
      ),
    );
    const upstream = await fetch(`${options.upstream}${request.url}`, {
      method: request.method ?? "GET",
      headers,
      ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
    });
    const body = Buffer.from(await upstream.arrayBuffer());
    const out: Record<string, string> = {};
    upstream.headers.forEach((value, key) => {
      if (key !== "content-length" && key !== "transfer-encoding" && key !== "content-encoding")
        out[key] = value;
    });
    response.writeHead(upstream.status, out);
    response.end(body);
  }

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://front.invalid");
    requests.push(`${url.pathname}${url.search}`);
    const match = request.method === "GET" ? REFERRERS.exec(url.pathname) : null;
    const work = match ? referrers(response, match[1]!, match[2]!, url) : pass(request, response);
    work.catch((error: unknown) => {
      response.writeHead(502);
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    url: `http://127.0.0.1:${port}`,
    requests,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
