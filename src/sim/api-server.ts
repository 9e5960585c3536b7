import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { parseLabelSelector } from "./parse-label-selector.ts";
import {
  ConflictError,
  ExpiredError,
  NotFoundError,
  type KubeObject,
  type ObjectStore,
  type Resource,
  type StoreEvent,
} from "./object-store.ts";

export interface ApiFaults {
  /** Share of non-watch requests answered 500. */
  errorRate: number;
  /** Share of non-watch requests never answered (half of them after the change was applied). */
  timeoutRate: number;
  /** Drop every watch connection this often (0: never). */
  dropWatchesEveryMs: number;
}

export const NO_FAULTS: ApiFaults = { errorRate: 0, timeoutRate: 0, dropWatchesEveryMs: 0 };

/** Requests the server answered, by "<VERB> <resource>[/<subresource>]"; watches apart. */
export interface ApiStats {
  calls: Map<string, number>;
  watches: number;
  faults: number;
}

export interface ApiHooks {
  /** Reads a container's log; undefined when the pod has none yet. */
  podLog(namespace: string, name: string, container: string | undefined): string | undefined;
  /** Deletes an object and what it owns, as the garbage collector would for the policy. */
  cascade(resource: Resource, object: KubeObject, policy: string | undefined): void;
}

const KIND: Record<Resource, { kind: string; apiVersion: string }> = {
  jobs: { kind: "Job", apiVersion: "batch/v1" },
  pods: { kind: "Pod", apiVersion: "v1" },
  configmaps: { kind: "ConfigMap", apiVersion: "v1" },
  secrets: { kind: "Secret", apiVersion: "v1" },
};

const ROUTE =
  /^\/(?:api\/v1|apis\/batch\/v1)\/namespaces\/([a-z0-9-]+)\/(jobs|pods|configmaps|secrets)(?:\/([a-z0-9.-]+))?(?:\/(log))?$/;

/**
 * The HTTP face of the fake API server: the paths, verbs, status objects and watch stream format
 * of the real one, for the resources the executor uses, plus fault injection.
 */
export class ApiServer {
  faults: ApiFaults = { ...NO_FAULTS };
  readonly stats: ApiStats = { calls: new Map(), watches: 0, faults: 0 };
  private readonly server: Server;
  private readonly watches = new Set<ServerResponse>();
  private readonly hanging = new Set<ServerResponse>();
  private readonly sockets = new Set<Socket>();
  private dropTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: ObjectStore,
    private readonly hooks: ApiHooks,
    private readonly options: { bookmarkMs: number; random: () => number; token: string },
  ) {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) this.status(res, 500, "InternalError", String(error));
      });
    });
    this.server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return (this.server.address() as AddressInfo).port;
  }

  setFaults(faults: Partial<ApiFaults>): void {
    this.faults = { ...this.faults, ...faults };
    clearInterval(this.dropTimer);
    this.dropTimer =
      this.faults.dropWatchesEveryMs > 0
        ? setInterval(() => this.dropWatches(), this.faults.dropWatchesEveryMs)
        : undefined;
  }

  /** Cuts every open watch mid-stream, as a restarting API server or a load balancer would. */
  dropWatches(): void {
    for (const res of this.watches) res.destroy();
    this.watches.clear();
  }

  async close(): Promise<void> {
    clearInterval(this.dropTimer);
    for (const res of [...this.watches, ...this.hanging]) res.destroy();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private count(key: string): void {
    this.stats.calls.set(key, (this.stats.calls.get(key) ?? 0) + 1);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (req.headers.authorization !== `Bearer ${this.options.token}`) {
      return this.status(res, 401, "Unauthorized", "Unauthorized");
    }
    const match = ROUTE.exec(url.pathname);
    if (!match) return this.status(res, 404, "NotFound", `the server could not find the requested resource`);
    const [, namespace, resource, name, sub] = match as unknown as [
      string,
      string,
      Resource,
      string?,
      string?,
    ];
    const body = await readBody(req);
    if (req.method === "GET" && !name && url.searchParams.get("watch") === "true") {
      return this.watch(res, resource, namespace, url.searchParams);
    }
    this.count(`${req.method} ${resource}${sub ? `/${sub}` : ""}`);
    const roll = this.options.random();
    if (roll < this.faults.errorRate) {
      this.stats.faults += 1;
      return this.status(res, 500, "InternalError", "injected fault: etcdserver: request timed out");
    }
    const hang = roll < this.faults.errorRate + this.faults.timeoutRate;
    const hangBefore = hang && this.options.random() < 0.5;
    if (hangBefore) return this.hang(res);
    const respond = hang
      ? (_: number, __: unknown) => this.hang(res)
      : (code: number, value: unknown) => send(res, code, value);
    try {
      switch (req.method) {
        case "GET":
          if (sub === "log") {
            const log = this.hooks.podLog(namespace, name!, url.searchParams.get("container") ?? undefined);
            if (!this.store.get("pods", namespace, name!))
              throw new NotFoundError(`pods "${name}" not found`);
            if (log === undefined) {
              return this.status(res, 400, "BadRequest", `container in pod "${name}" is waiting to start`);
            }
            if (hang) return this.hang(res);
            res.writeHead(200, { "content-type": "text/plain" });
            return void res.end(log);
          }
          if (name) {
            const object = this.store.get(resource, namespace, name);
            if (!object) throw new NotFoundError(`${resource} "${name}" not found`);
            return respond(200, typed(resource, object));
          }
          return respond(200, this.list(resource, namespace, url.searchParams));
        case "POST": {
          const object = JSON.parse(body) as KubeObject;
          object.metadata = { ...object.metadata, namespace };
          if (!object.metadata.name && object.metadata.generateName) {
            object.metadata.name = `${object.metadata.generateName}${Math.random().toString(36).slice(2, 7)}`;
          }
          return respond(201, typed(resource, this.store.create(resource, object)));
        }
        case "DELETE": {
          const options = body ? (JSON.parse(body) as { propagationPolicy?: string }) : {};
          const policy = url.searchParams.get("propagationPolicy") ?? options.propagationPolicy;
          const gone = this.store.delete(resource, namespace, name!);
          this.hooks.cascade(resource, gone, policy);
          return respond(200, typed(resource, gone));
        }
        default:
          return this.status(res, 405, "MethodNotAllowed", `${req.method} is not supported here`);
      }
    } catch (error) {
      if (error instanceof NotFoundError) return this.status(res, 404, "NotFound", error.message);
      if (error instanceof ConflictError) return this.status(res, 409, "AlreadyExists", error.message);
      throw error;
    }
  }

  private list(resource: Resource, namespace: string, params: URLSearchParams) {
    const { items, resourceVersion } = this.store.list(
      resource,
      namespace,
      parseLabelSelector(params.get("labelSelector")),
    );
    return {
      kind: `${KIND[resource].kind}List`,
      apiVersion: KIND[resource].apiVersion,
      metadata: { resourceVersion: String(resourceVersion) },
      items,
    };
  }

  private watch(res: ServerResponse, resource: Resource, namespace: string, params: URLSearchParams): void {
    this.stats.watches += 1;
    const selector = parseLabelSelector(params.get("labelSelector"));
    const matches = (e: StoreEvent) =>
      e.resource === resource &&
      e.object.metadata.namespace === namespace &&
      selector(e.object.metadata.labels ?? {});
    const write = (type: string, object: unknown) => res.write(`${JSON.stringify({ type, object })}\n`);
    const from = params.get("resourceVersion");
    let replay: StoreEvent[] = [];
    if (from && from !== "0") {
      try {
        replay = this.store.since(Number(from));
      } catch (error) {
        if (!(error instanceof ExpiredError)) throw error;
        // The real server answers 200 and then an ERROR event carrying a 410 Status.
        res.writeHead(200, { "content-type": "application/json" });
        write("ERROR", statusObject(410, "Expired", error.message));
        return void res.end();
      }
    }
    res.writeHead(200, { "content-type": "application/json" });
    this.watches.add(res);
    const unsubscribe = this.store.subscribe((event) => {
      if (matches(event)) write(event.type, typed(resource, event.object));
    });
    if (from && from !== "0") {
      for (const event of replay) if (matches(event)) write(event.type, typed(resource, event.object));
    } else {
      for (const object of this.store.list(resource, namespace, selector).items)
        write("ADDED", typed(resource, object));
    }
    const bookmarks =
      params.get("allowWatchBookmarks") === "true"
        ? setInterval(
            () =>
              write("BOOKMARK", {
                ...KIND[resource],
                metadata: { resourceVersion: String(this.store.resourceVersion) },
              }),
            this.options.bookmarkMs,
          )
        : undefined;
    const timeoutSeconds = Number(params.get("timeoutSeconds") ?? 0);
    const timeout = timeoutSeconds > 0 ? setTimeout(() => res.end(), timeoutSeconds * 1000) : undefined;
    res.on("close", () => {
      unsubscribe();
      clearInterval(bookmarks);
      clearTimeout(timeout);
      this.watches.delete(res);
    });
  }

  private hang(res: ServerResponse): void {
    this.stats.faults += 1;
    this.hanging.add(res);
    res.on("close", () => this.hanging.delete(res));
  }

  private status(res: ServerResponse, code: number, reason: string, message: string): void {
    send(res, code, statusObject(code, reason, message));
  }
}

function typed(resource: Resource, object: KubeObject): KubeObject {
  return { ...KIND[resource], ...object };
}

function statusObject(code: number, reason: string, message: string) {
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code };
}

function send(res: ServerResponse, code: number, value: unknown): void {
  res.writeHead(code, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (text += chunk));
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });
}
