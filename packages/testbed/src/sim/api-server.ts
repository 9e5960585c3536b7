import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { applyPatch } from "./apply-patch.ts";
import { authorizeRequest, type Identity, type RequestAttributes } from "./authorize-request.ts";
import { discoveryDocument } from "./discovery-document.ts";
import type { KubeObject, ObjectStore, Resource, StoreEvent } from "./object-store.ts";
import { parseFieldSelector } from "./parse-field-selector.ts";
import { parseLabelSelector } from "./parse-label-selector.ts";
import { findResourceType, type ResourceType } from "./resource-types.ts";
import { StoreError } from "./store-error.ts";
import { tableView } from "./table-view.ts";

export interface ApiFaults {
  /** Share of non-watch requests answered 500. */
  errorRate: number;
  /** Share of non-watch requests never answered (half of them after the change was applied). */
  timeoutRate: number;
  /** Drop every watch connection this often (0: never). */
  dropWatchesEveryMs: number;
}

export const NO_FAULTS: ApiFaults = { errorRate: 0, timeoutRate: 0, dropWatchesEveryMs: 0 };

/** Requests the server answered, by "<VERB> <resource>[/<subresource>]" (discovery as "GET discovery"); watches apart. */
export interface ApiStats {
  calls: Map<string, number>;
  watches: number;
  faults: number;
  /** Every request of a token other than the admin's, with what RBAC made of it. */
  authorizations: (RequestAttributes & { user: string; allowed: boolean; by?: string })[];
}

export interface ApiHooks {
  /** Reads a container's log; undefined when the pod has none yet. */
  podLog(namespace: string, name: string, container: string | undefined): string | undefined;
  /** Deletes an object and what it owns, as the garbage collector would for the policy. */
  cascade(resource: Resource, object: KubeObject, policy: string | undefined): void;
  /** Fills in or refuses (StoreError "Invalid") what the server owns in a new object (a Service's clusterIP). */
  admit?(resource: Resource, object: KubeObject): void;
}

/** What a resource path names: `/api/v1/…` or `/apis/<group>/<version>/…`, then `[namespaces/<ns>/]<resource>[/<name>[/<sub>]]`. */
interface Target {
  type: ResourceType;
  /** undefined: every namespace (a namespaced type listed without one); "" for cluster-scoped types. */
  namespace: string | undefined;
  name?: string;
  sub?: string;
}

const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

function resolveTarget(pathname: string): Target | undefined {
  const parts = pathname.split("/").filter(Boolean);
  let group: string;
  let rest: string[];
  if (parts[0] === "api" && parts[1] === "v1") [group, rest] = ["", parts.slice(2)];
  else if (parts[0] === "apis" && parts.length >= 3) [group, rest] = [parts[1]!, parts.slice(3)];
  else return undefined;
  const version = group === "" ? "v1" : parts[2]!;
  let namespace: string | undefined;
  if (rest[0] === "namespaces" && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource, name, sub, ...more] = rest;
  if (!resource || more.length > 0) return undefined;
  const type = findResourceType(group, version, resource);
  if (!type || (!type.namespaced && namespace !== undefined)) return undefined;
  if (sub && !(sub === "status" && type.statusSubresource) && !(sub === "log" && resource === "pods"))
    return undefined;
  return {
    type,
    namespace: type.namespaced ? namespace : "",
    ...(name ? { name } : {}),
    ...(sub ? { sub } : {}),
  };
}

/**
 * The HTTP(S) face of the simulated API server: discovery, and the paths, verbs (get, list, watch,
 * create, update, patch, delete, the status subresource), Status objects, Tables and watch stream
 * format of the real one for every type in RESOURCE_TYPES, plus fault injection.
 */
export class ApiServer {
  faults: ApiFaults = { ...NO_FAULTS };
  readonly stats: ApiStats = { calls: new Map(), watches: 0, faults: 0, authorizations: [] };
  /** Tokens other than the admin's, whose requests RBAC decides. */
  private readonly identities = new Map<string, Identity>();
  private readonly server: Server;
  private readonly watches = new Set<ServerResponse>();
  private readonly hanging = new Set<ServerResponse>();
  private readonly sockets = new Set<Socket>();
  private dropTimer: NodeJS.Timeout | undefined;
  private address = "127.0.0.1";

  constructor(
    private readonly store: ObjectStore,
    private readonly hooks: ApiHooks,
    private readonly options: {
      bookmarkMs: number;
      random: () => number;
      token: string;
      /** Serve HTTPS with this certificate (PEM); plain HTTP without. */
      tls?: { certPem: string; keyPem: string };
    },
  ) {
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) this.status(res, 500, "InternalError", String(error));
      });
    };
    this.server = options.tls
      ? createHttpsServer({ cert: options.tls.certPem, key: options.tls.keyPem }, handler)
      : createHttpServer(handler);
    this.server.on(options.tls ? "secureConnection" : "connection", (socket: Socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const port = (this.server.address() as AddressInfo).port;
    this.address = `127.0.0.1:${port}`;
    return port;
  }

  /** Accepts a bearer token as this identity; what it may do is then up to RBAC objects in the store. */
  addToken(token: string, identity: Identity): void {
    this.identities.set(token, identity);
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
    if (["/healthz", "/readyz", "/livez"].includes(url.pathname)) {
      res.writeHead(200, { "content-type": "text/plain" });
      return void res.end("ok");
    }
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const identity = token === this.options.token ? undefined : this.identities.get(token ?? "");
    if (token !== this.options.token && identity === undefined) {
      return this.status(res, 401, "Unauthorized", "Unauthorized");
    }
    const discovery =
      req.method === "GET" && discoveryDocument({ path: url.pathname, serverAddress: this.address });
    if (discovery) {
      this.count("GET discovery");
      return send(res, 200, discovery);
    }
    const target = resolveTarget(url.pathname);
    if (!target) return this.status(res, 404, "NotFound", `the server could not find the requested resource`);
    const { type, name, sub } = target;
    const body = await readBody(req);
    if (identity) {
      const refusal = this.authorize(identity, req.method ?? "GET", target, url.searchParams);
      if (refusal) return this.status(res, 403, "Forbidden", refusal);
    }
    try {
      if (req.method === "GET" && !name && url.searchParams.get("watch") === "true") {
        return this.watch(res, target, url.searchParams);
      }
      this.count(`${req.method} ${type.resource}${sub ? `/${sub}` : ""}`);
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
      if (name === undefined) {
        if (req.method === "GET")
          return respond(200, this.list(target, url.searchParams, req.headers.accept));
        if (req.method === "POST") {
          if (target.namespace === undefined) {
            return this.status(res, 405, "MethodNotAllowed", `create ${type.resource} in a namespace`);
          }
          return respond(201, typed(type, this.create(target, body)));
        }
        return this.status(
          res,
          405,
          "MethodNotAllowed",
          `${req.method} of a collection is not supported here`,
        );
      }
      if (target.namespace === undefined)
        return this.status(res, 404, "NotFound", `${type.resource} need a namespace`);
      const namespace = target.namespace;
      const current = () => {
        const object = this.store.get(type.resource, namespace, name);
        if (!object) throw new StoreError(`${type.resource} "${name}" not found`, { code: "NotFound" });
        return object;
      };
      switch (req.method) {
        case "GET": {
          if (sub === "log") {
            const log = this.hooks.podLog(namespace, name, url.searchParams.get("container") ?? undefined);
            current();
            if (log === undefined) {
              return this.status(res, 400, "BadRequest", `container in pod "${name}" is waiting to start`);
            }
            if (hang) return this.hang(res);
            res.writeHead(200, { "content-type": "text/plain" });
            return void res.end(log);
          }
          const object = current();
          if (wantsTable(req.headers.accept)) {
            return respond(
              200,
              tableView({
                type,
                items: [typed(type, object)],
                resourceVersion: object.metadata.resourceVersion ?? "",
                includeObject: url.searchParams.get("includeObject"),
              }),
            );
          }
          return respond(200, typed(type, object));
        }
        case "PUT":
          return respond(200, typed(type, this.replace(target, current(), parseObject(body))));
        case "PATCH": {
          const object = current();
          const patched = applyPatch({
            document: typed(type, object),
            contentType: req.headers["content-type"] ?? "",
            body,
          }) as KubeObject;
          return respond(200, typed(type, this.replace(target, object, patched)));
        }
        case "DELETE": {
          const options = body ? (JSON.parse(body) as { propagationPolicy?: string }) : {};
          const policy = url.searchParams.get("propagationPolicy") ?? options.propagationPolicy;
          const gone = this.store.delete(type.resource, namespace, name);
          if (!gone.metadata.deletionTimestamp) this.hooks.cascade(type.resource, gone, policy);
          return respond(200, typed(type, gone));
        }
        default:
          return this.status(res, 405, "MethodNotAllowed", `${req.method} is not supported here`);
      }
    } catch (error) {
      if (error instanceof StoreError) return this.status(res, error.httpStatus, error.code, error.message);
      throw error;
    }
  }

  /** RBAC's verdict on a request of a token other than the admin's: undefined, or why it is refused. */
  private authorize(
    identity: Identity,
    method: string,
    target: Target,
    params: URLSearchParams,
  ): string | undefined {
    const { type, name, sub } = target;
    const verbs: Record<string, string> = { POST: "create", PUT: "update", PATCH: "patch", DELETE: "delete" };
    const verb = verbs[method] ?? (name ? "get" : params.get("watch") === "true" ? "watch" : "list");
    const attributes: RequestAttributes = {
      verb,
      group: type.group,
      resource: `${type.resource}${sub ? `/${sub}` : ""}`,
      namespace: target.namespace ?? "",
      ...(name ? { name } : {}),
    };
    const verdict = authorizeRequest(this.store, identity, attributes);
    this.stats.authorizations.push({
      ...attributes,
      user: identity.user,
      allowed: verdict.allowed,
      ...(verdict.allowed ? { by: verdict.by } : {}),
    });
    return verdict.allowed ? undefined : verdict.message;
  }

  private create(target: Target, body: string): KubeObject {
    const object = parseObject(body);
    object.metadata = { ...object.metadata, namespace: target.namespace ?? "" };
    if (!object.metadata.name && object.metadata.generateName) {
      object.metadata.name = `${object.metadata.generateName}${Math.random().toString(36).slice(2, 7)}`;
    }
    if (!NAME.test(object.metadata.name ?? "")) {
      throw new StoreError(
        `${target.type.kind} ${JSON.stringify(object.metadata.name ?? "")} is invalid: metadata.name must be lower-case letters, digits, '-' and '.', starting and ending with a letter or digit`,
        { code: "Invalid" },
      );
    }
    this.hooks.admit?.(target.type.resource, object);
    return this.store.create(target.type.resource, object);
  }

  /**
   * PUT and PATCH: the new object replaces the stored one, keeping what the server owns (name,
   * uid, creation time) and — for a type with a status subresource — the status on the object's
   * own path and everything but the status on `/status`. A stale resourceVersion is a 409.
   */
  private replace(target: Target, current: KubeObject, incoming: KubeObject): KubeObject {
    const { type, sub } = target;
    const sent = incoming.metadata?.resourceVersion;
    if (sent && sent !== current.metadata.resourceVersion) {
      throw new StoreError(
        `Operation cannot be fulfilled on ${type.resource} "${current.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`,
        { code: "Conflict" },
      );
    }
    const { apiVersion: _a, kind: _k, status, ...fields } = incoming;
    const kept = type.statusSubresource ? current.status : status;
    const next: KubeObject =
      sub === "status"
        ? { ...current, status: status ?? {} }
        : {
            ...fields,
            metadata: {
              ...incoming.metadata,
              name: current.metadata.name,
              namespace: current.metadata.namespace,
              uid: current.metadata.uid,
              creationTimestamp: current.metadata.creationTimestamp,
              generation: current.metadata.generation,
              ...(current.metadata.deletionTimestamp
                ? { deletionTimestamp: current.metadata.deletionTimestamp }
                : {}),
            },
            ...(kept ? { status: kept } : {}),
          };
    if (sub !== "status" && JSON.stringify(next.spec) !== JSON.stringify(current.spec)) {
      next.metadata.generation = Number(current.metadata.generation ?? 1) + 1;
    }
    const updated = this.store.update(
      type.resource,
      current.metadata.namespace,
      current.metadata.name,
      (o) => {
        for (const key of Object.keys(o)) delete o[key];
        Object.assign(o, structuredClone(next));
      },
    );
    if (!updated)
      throw new StoreError(`${type.resource} "${current.metadata.name}" not found`, { code: "NotFound" });
    return updated;
  }

  private selected(target: Target, params: URLSearchParams): (o: KubeObject) => boolean {
    const labels = parseLabelSelector(params.get("labelSelector"));
    const fields = parseFieldSelector(params.get("fieldSelector"));
    return (o) => labels(o.metadata.labels ?? {}) && fields(o);
  }

  private list(target: Target, params: URLSearchParams, accept: string | undefined) {
    const { type } = target;
    const selected = this.selected(target, params);
    const { items, resourceVersion } = this.store.list(type.resource, target.namespace, () => true);
    const chosen = items.filter(selected).map((o) => typed(type, o));
    if (wantsTable(accept)) {
      return tableView({
        type,
        items: chosen,
        resourceVersion: String(resourceVersion),
        includeObject: params.get("includeObject"),
      });
    }
    return {
      kind: `${type.kind}List`,
      apiVersion: apiVersionOf(type),
      metadata: { resourceVersion: String(resourceVersion) },
      items: chosen,
    };
  }

  private watch(res: ServerResponse, target: Target, params: URLSearchParams): void {
    const { type, namespace } = target;
    const selected = this.selected(target, params);
    this.stats.watches += 1;
    const matches = (e: StoreEvent) =>
      e.resource === type.resource &&
      (namespace === undefined || e.object.metadata.namespace === namespace) &&
      selected(e.object);
    const write = (eventType: string, object: unknown) =>
      res.write(`${JSON.stringify({ type: eventType, object })}\n`);
    const from = params.get("resourceVersion");
    let replay: StoreEvent[] = [];
    if (from && from !== "0") {
      try {
        replay = this.store.since(Number(from));
      } catch (error) {
        if (!(error instanceof StoreError) || error.code !== "Expired") throw error;
        // The real server answers 200 and then an ERROR event carrying a 410 Status.
        res.writeHead(200, { "content-type": "application/json" });
        write("ERROR", statusObject(410, "Expired", error.message));
        return void res.end();
      }
    }
    res.writeHead(200, { "content-type": "application/json" });
    this.watches.add(res);
    const unsubscribe = this.store.subscribe((event) => {
      if (matches(event)) write(event.type, typed(type, event.object));
    });
    if (from && from !== "0") {
      for (const event of replay) if (matches(event)) write(event.type, typed(type, event.object));
    } else {
      for (const object of this.store.list(type.resource, namespace, () => true).items.filter(selected))
        write("ADDED", typed(type, object));
    }
    const bookmarks =
      params.get("allowWatchBookmarks") === "true"
        ? setInterval(
            () =>
              write("BOOKMARK", {
                kind: type.kind,
                apiVersion: apiVersionOf(type),
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

function apiVersionOf(type: ResourceType): string {
  return type.group ? `${type.group}/${type.version}` : type.version;
}

/** The object as served: kind and apiVersion set, no namespace on a cluster-scoped one. */
function typed(type: ResourceType, object: KubeObject): KubeObject {
  const served: KubeObject = { kind: type.kind, apiVersion: apiVersionOf(type), ...object };
  if (!type.namespaced) {
    const { namespace: _n, ...metadata } = object.metadata;
    served.metadata = metadata as KubeObject["metadata"];
  }
  return served;
}

function wantsTable(accept: string | undefined): boolean {
  return /as=Table/.test(accept ?? "");
}

function parseObject(body: string): KubeObject {
  let object: unknown;
  try {
    object = JSON.parse(body);
  } catch (error) {
    throw new StoreError(`the request body is not JSON: ${String(error)}`, { code: "Invalid", cause: error });
  }
  if (!object || typeof object !== "object" || Array.isArray(object)) {
    throw new StoreError("the request body is not a Kubernetes object", { code: "Invalid" });
  }
  const typedObject = object as KubeObject;
  typedObject.metadata ??= {} as KubeObject["metadata"];
  return typedObject;
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
