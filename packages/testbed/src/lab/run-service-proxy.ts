import { setTimeout as sleep } from "node:timers/promises";
import { connect, createServer, type Server, type Socket } from "node:net";
import type { LabApiGet } from "./lab-api-client.ts";

interface ServiceList {
  items: {
    metadata: { namespace: string; name: string };
    spec?: { clusterIP?: string; ports?: { name?: string; port: number; protocol?: string }[] };
  }[];
}

interface SliceList {
  items: {
    metadata: { namespace: string; labels?: Record<string, string> };
    endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[];
    ports?: { name?: string; port: number; protocol?: string }[];
  }[];
}

interface Listener {
  server: Server;
  /** namespace/name and the Service port's name, which picks the endpoint port. */
  service: string;
  portName: string;
}

/**
 * The lab's kube-proxy, one per node, in the node's namespace: it listens on every ClusterIP:port
 * of TCP Services (the Service CIDR is routed to the node's loopback, so any of its addresses can
 * be bound) and pipes each connection to a ready endpoint picked at random from the Services'
 * EndpointSlices, which it re-reads every `pollMs`. A Service without ready endpoints resets
 * connections, as kube-proxy's reject rule does. `onSynced` is called after the first full read.
 * While `stopped()` holds, it is as if it had crashed: no listener, every proxied connection cut
 * (`onState` says when a change of `stopped()` has taken effect; `wake` starts a turn at once).
 */
export async function runServiceProxy(options: {
  api: LabApiGet;
  signal: AbortSignal;
  log: (message: string, fields?: Record<string, unknown>) => void;
  pollMs?: number;
  onSynced?: () => void;
  stopped?: () => boolean;
  onState?: (state: "running" | "stopped") => void;
  /** Receives the function that ends the current wait, so that a change is applied at once. */
  wakeable?: (wake: () => void) => void;
}): Promise<void> {
  const { api, signal, log } = options;
  const listeners = new Map<string, Listener>();
  let endpoints = new Map<string, Map<string, string[]>>();
  const open = new Set<Socket>();

  const forward = (client: Socket, listener: Listener) => {
    const targets = endpoints.get(listener.service)?.get(listener.portName) ?? [];
    const target = targets[Math.floor(Math.random() * targets.length)];
    if (!target) return void client.resetAndDestroy();
    const [host, port] = target.split(":");
    const upstream = connect({ host: host!, port: Number(port) });
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on("close", () => open.delete(socket));
    }
    client.pipe(upstream).pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.resetAndDestroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  };

  const sync = async () => {
    const [services, slices] = await Promise.all([
      api<ServiceList>("/api/v1/services"),
      api<SliceList>("/apis/discovery.k8s.io/v1/endpointslices"),
    ]);
    const next = new Map<string, Map<string, string[]>>();
    for (const slice of slices.items) {
      const service = `${slice.metadata.namespace}/${slice.metadata.labels?.["kubernetes.io/service-name"] ?? ""}`;
      const byPort = next.get(service) ?? new Map<string, string[]>();
      next.set(service, byPort);
      for (const port of slice.ports ?? []) {
        if ((port.protocol ?? "TCP") !== "TCP") continue;
        const list = byPort.get(port.name ?? "") ?? [];
        byPort.set(port.name ?? "", list);
        for (const endpoint of slice.endpoints ?? []) {
          if (endpoint.conditions?.ready === false) continue;
          for (const address of endpoint.addresses) list.push(`${address}:${port.port}`);
        }
      }
    }
    endpoints = next;
    const wanted = new Map<string, { service: string; portName: string; ip: string; port: number }>();
    for (const service of services.items) {
      const ip = service.spec?.clusterIP;
      if (!ip || ip === "None") continue;
      for (const port of service.spec?.ports ?? []) {
        if ((port.protocol ?? "TCP") !== "TCP") continue;
        wanted.set(`${ip}:${port.port}`, {
          service: `${service.metadata.namespace}/${service.metadata.name}`,
          portName: port.name ?? "",
          ip,
          port: port.port,
        });
      }
    }
    for (const [key, listener] of listeners) {
      const want = wanted.get(key);
      if (want && want.service === listener.service && want.portName === listener.portName) continue;
      listener.server.close();
      listeners.delete(key);
      log("stopped listening", { address: key, service: listener.service });
    }
    for (const [key, want] of wanted) {
      if (listeners.has(key)) continue;
      const listener: Listener = { server: createServer(), service: want.service, portName: want.portName };
      listener.server.on("connection", (socket) => forward(socket, listener));
      try {
        await new Promise<void>((resolve, reject) => {
          listener.server.once("error", reject);
          listener.server.listen({ host: want.ip, port: want.port }, () => resolve());
        });
        listeners.set(key, listener);
        log("listening", { address: key, service: want.service });
      } catch (error) {
        log("cannot listen", { address: key, error: String(error) });
      }
    }
  };

  const shutDown = () => {
    for (const listener of listeners.values()) listener.server.close();
    listeners.clear();
    for (const socket of open) socket.destroy();
  };
  let synced = false;
  let wake = () => undefined as void;
  options.wakeable?.(() => wake());
  while (!signal.aborted) {
    if (options.stopped?.()) {
      if (listeners.size > 0 || open.size > 0) log("stopped");
      shutDown();
      options.onState?.("stopped");
    } else {
      try {
        await sync();
        if (!synced) {
          synced = true;
          options.onSynced?.();
        }
        options.onState?.("running");
      } catch (error) {
        log("cannot read Services, keeping what was read last", { error: String(error) });
      }
    }
    const woken = new AbortController();
    wake = () => woken.abort();
    await sleep(options.pollMs ?? 500, undefined, { signal: AbortSignal.any([signal, woken.signal]) }).catch(
      () => undefined,
    );
    wake = () => undefined;
  }
  shutDown();
}
