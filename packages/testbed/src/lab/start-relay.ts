import {
  connect,
  createServer,
  type ListenOptions,
  type NetConnectOpts,
  type Server,
  type Socket,
} from "node:net";

/**
 * A byte relay: every connection accepted on `listen` (a TCP address or a unix socket path) is
 * piped to a new connection to `to`. The lab uses two to make its API server (on loopback in the
 * host's namespace) reachable from its namespaces: one in the host from a unix socket to the API
 * port, one in the master namespace from the lab address to that socket. TLS passes through.
 */
export async function startRelay(options: {
  listen: ListenOptions;
  to: NetConnectOpts;
}): Promise<{ server: Server; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(options.to);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.listen, () => resolve());
  });
  return {
    server,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
