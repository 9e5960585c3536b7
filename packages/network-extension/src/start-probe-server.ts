import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The probe server of a probe pod: `GET /healthz` answers 200 with the pod's name, on every address
 * of the pod (its pod IP, or its node's addresses for a host-network pod). Keep-alive connections
 * stay open far longer than the probe interval, so a reused connection is only ever closed by the network.
 */
export async function startProbeServer(options: {
  port: number;
  host?: string;
  name: string;
}): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    if (request.method === "GET" && (request.url === "/healthz" || request.url === "/")) {
      const body = JSON.stringify({ pod: options.name });
      response.writeHead(200, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
      });
      response.end(body);
      return;
    }
    response.writeHead(404, { "content-length": 0 });
    response.end();
  });
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 125_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // Without a host Node listens on :: where the pod has IPv6, else on 0.0.0.0.
    if (options.host) server.listen(options.port, options.host, () => resolve());
    else server.listen(options.port, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
