import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { RouteHandler } from "../http/route-handler.ts";
import { send } from "../http/send.ts";

/**
 * The bot's internal HTTP server: what only Prometheus and operators may read (/metrics, /runs),
 * on a port of its own that the Service's public port and the Ingress never reach.
 */
export async function serveInternal(options: {
  routes: RouteHandler;
  port: number;
  host: string;
  log: Logger;
}): Promise<{ port: number; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    Promise.resolve(options.routes(req, res))
      .then((handled) => handled || send(res, 404, "text/plain; charset=utf-8", "not found\n"))
      .catch((error: unknown) => {
        options.log.error({ err: error, url: req.url }, "internal route failed");
        if (!res.headersSent) send(res, 500, "text/plain; charset=utf-8", "internal error\n");
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
