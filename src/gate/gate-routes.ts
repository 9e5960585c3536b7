import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { ApplicationFunctionOptions } from "probot";
import { REPORT_POLICY } from "../app/http-routes.ts";
import { ARCHES, archSchema } from "../arch/arch.ts";
import { gateArchDir } from "./process-gate-arch.ts";
import { gateOpenApiDocument } from "./gate-openapi.ts";
import type { GateQueue } from "./gate-queue.ts";
import { gateRequestSchema, type Problem } from "./gate-schemas.ts";
import { gateRequestKey, type GateStore, type StoredGate } from "./gate-store.ts";
import { bearerMatches, type TokenSource } from "./gate-tokens.ts";
import { gateView } from "./gate-view.ts";
import { ReleaseControllerError, type ReleaseController } from "./release-controller.ts";

/** A Probot server handler: true when it answered the request. */
type Handler = Parameters<ApplicationFunctionOptions["addHandler"]>[0];

export interface GateRoutesDeps {
  store: GateStore;
  queue: GateQueue;
  tokens: TokenSource;
  releaseController: ReleaseController;
  publicUrl: string;
  /** Where gate runs keep their reports (the workers' data directory). */
  dataDir: string;
  log: Logger;
  now?: () => Date;
  newId?: () => string;
}

/** Gate requests are a few hundred bytes; anything far larger is refused unread. */
const MAX_BODY_BYTES = 16 * 1024;

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new BodyTooLarge());
        req.resume();
      } else {
        chunks.push(chunk);
      }
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): true {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers });
  res.end(`${JSON.stringify(body, null, 2)}\n`);
  return true;
}

function problem(
  res: ServerResponse,
  status: number,
  title: string,
  detail: string,
  extra: Partial<Problem> = {},
  headers: Record<string, string> = {},
): true {
  res.writeHead(status, {
    "content-type": "application/problem+json",
    "cache-control": "no-store",
    ...headers,
  });
  res.end(`${JSON.stringify({ title, status, detail, ...extra } satisfies Problem, null, 2)}\n`);
  return true;
}

/**
 * The release-payload gate API as a Probot server handler: POST /api/v1/gates starts a gate (or
 * joins the identical active one), GET /api/v1/gates/{id} shows it, GET /api/v1/openapi.json
 * describes both; /gates/{id}/{arch}/report is the arch's HTML report (an unguessable address, like
 * the run pages). The API needs a bearer token from the gate-tokens secret.
 */
export function createGateRoutes(deps: GateRoutesDeps): Handler {
  const {
    store,
    queue,
    tokens,
    releaseController,
    publicUrl,
    log,
    now = () => new Date(),
    newId = () => randomBytes(16).toString("hex"),
  } = deps;
  const openApi = `${JSON.stringify(gateOpenApiDocument(), null, 2)}\n`;

  async function startGate(req: IncomingMessage, res: ServerResponse): Promise<true> {
    let text: string;
    try {
      text = await readBody(req);
    } catch (error) {
      if (error instanceof BodyTooLarge)
        return problem(
          res,
          413,
          "Body too large",
          `a gate request has at most ${MAX_BODY_BYTES} bytes`,
          {},
          { connection: "close" },
        );
      throw error;
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return problem(res, 400, "Malformed body", "the body is not JSON");
    }
    const parsed = gateRequestSchema.safeParse(body);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((issue) => ({
        path: issue.path.join(".") || "(body)",
        message: issue.message,
      }));
      return problem(
        res,
        400,
        "Not a gate request",
        issues.map((i) => `${i.path}: ${i.message}`).join("; "),
        { issues },
      );
    }
    const request = parsed.data;
    // Always asked, so that a misspelt stream fails now instead of feeding a pool nobody reads.
    let latest;
    try {
      latest = await releaseController.latest(request.stream);
    } catch (error) {
      if (error instanceof ReleaseControllerError && error.code === "unknown-stream") {
        return problem(res, 422, "Unknown release stream", error.message, {
          issues: [{ path: "stream", message: error.message }],
        });
      }
      log.warn({ err: error, stream: request.stream }, "release-controller lookup failed");
      return problem(
        res,
        502,
        "Release-controller unavailable",
        error instanceof Error ? error.message : String(error),
      );
    }
    const baselinePayload = request.baselinePayload ?? latest.pullSpec;
    const gate: StoredGate = {
      id: newId(),
      payload: request.payload,
      baselinePayload,
      baselineSource: request.baselinePayload ? "request" : "release-controller",
      ...(request.baselinePayload ? {} : { baselineRelease: latest.name }),
      stream: request.stream,
      iterations: request.iterations,
      arches: ARCHES.filter((arch) => request.arches.includes(arch)),
      ...(request.capabilities?.length ? { capabilities: [...new Set(request.capabilities)].sort() } : {}),
      createdAt: now().toISOString(),
      requestKey: gateRequestKey({ ...request, baselinePayload }),
    };
    const { id, created } = await store.createOrJoin(gate);
    if (created) {
      try {
        for (const arch of gate.arches) await queue.enqueue({ gateId: id, arch });
      } catch (error) {
        await store.remove(gate);
        log.error({ err: error, gateId: id }, "gate could not be queued");
        return problem(res, 503, "Gate not queued", "the gate could not be queued; try again");
      }
      log.info(
        { gateId: id, payload: gate.payload, baselinePayload, stream: gate.stream, arches: gate.arches },
        "gate started",
      );
    }
    const stored = await store.get(id);
    if (!stored) return problem(res, 503, "Gate vanished", "the gate expired while it was read; try again");
    return send(res, created ? 202 : 200, gateView(stored.gate, stored.arches, publicUrl), {
      location: `${publicUrl}/api/v1/gates/${id}`,
    });
  }

  async function showReport(res: ServerResponse, id: string, arch: string): Promise<boolean> {
    const parsedArch = archSchema.safeParse(arch);
    if (!parsedArch.success || !(await store.get(id))) return false;
    const report = await readFile(
      join(gateArchDir(deps.dataDir, id, parsedArch.data), "report", "report.html"),
    ).catch(() => undefined);
    if (!report) return problem(res, 404, "No report yet", "this arch has no report (yet)");
    res.writeHead(200, {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "content-security-policy": REPORT_POLICY,
      "x-content-type-options": "nosniff",
    });
    res.end(report);
    return true;
  }

  return async (req, res) => {
    const path = new URL(req.url ?? "/", "http://bot").pathname;
    const report = /^\/gates\/([0-9a-f]{32})\/([a-z0-9]+)\/report$/.exec(path);
    if (report && (req.method === "GET" || req.method === "HEAD"))
      return showReport(res, report[1]!, report[2]!);
    if (path === "/api/v1/openapi.json" && req.method === "GET") {
      res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
      res.end(openApi);
      return true;
    }
    if (path !== "/api/v1/gates" && !path.startsWith("/api/v1/gates/")) return false;

    if (!bearerMatches(req.headers.authorization, await tokens.digests())) {
      req.resume();
      return problem(
        res,
        401,
        "Unauthorized",
        "a valid bearer token is needed (Authorization: Bearer <token>)",
        {},
        { "www-authenticate": 'Bearer realm="netstress-gate"' },
      );
    }
    if (path === "/api/v1/gates") {
      if (req.method === "POST") return startGate(req, res);
      return problem(res, 405, "Method not allowed", "POST a gate request here", {}, { allow: "POST" });
    }
    const match = /^\/api\/v1\/gates\/([^/]+)$/.exec(path);
    if (!match || req.method !== "GET") return problem(res, 404, "Not found", "no such gate API resource");
    const found = /^[0-9a-f]{32}$/.test(match[1]!) ? await store.get(match[1]!) : undefined;
    if (!found) return problem(res, 404, "No such gate", `no gate ${match[1]}`);
    return send(res, 200, gateView(found.gate, found.arches, publicUrl));
  };
}
