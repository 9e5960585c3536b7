import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { ARCHES, archSchema } from "@netstress/core/arch/arch.ts";
import type { RouteHandler } from "../http/route-handler.ts";
import { send } from "../http/send.ts";
import { sendReport } from "../http/send-report.ts";
import { ReleaseControllerError, type ReleaseController } from "../payload/release-controller.ts";
import type { RunDeps } from "../queue/run-deps.ts";
import { gateOpenApiDocument } from "./gate-openapi.ts";
import type { GateRunSettings } from "./gate-run-record.ts";
import { gateRequestSchema, type Problem } from "./gate-schemas.ts";
import { gateRequestKey, gateRunId, type GateStore, type StoredGate } from "./gate-store.ts";
import { bearerMatches, type TokenSource } from "./gate-tokens.ts";
import { gateView } from "./gate-view.ts";
import { readGate } from "./read-gate.ts";
import { startGate } from "./start-gate.ts";

export interface GateRoutesDeps {
  gates: GateStore;
  /** The run machinery every run shares: a gate's arches are runs. */
  runs: RunDeps;
  runSettings: GateRunSettings;
  tokens: TokenSource;
  releaseController: ReleaseController;
  publicUrl: string;
  /** Reports are served from under it only. */
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

const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  send(res, status, "application/json", `${JSON.stringify(body, null, 2)}\n`, headers);

function problem(
  res: ServerResponse,
  status: number,
  title: string,
  detail: string,
  extra: Partial<Problem> = {},
  headers: Record<string, string> = {},
): true {
  const body = { title, status, detail, ...extra } satisfies Problem;
  return send(res, status, "application/problem+json", `${JSON.stringify(body, null, 2)}\n`, headers);
}

/**
 * The release-payload gate API as a Probot server handler: POST /api/v1/gates starts a gate (or
 * joins the identical active one), GET /api/v1/gates/{id} shows it, GET /api/v1/openapi.json
 * describes both; /gates/{id}/{arch}/report is the arch's HTML report (an unguessable address, like
 * the run pages). The API needs a bearer token from the gate-tokens secret. A gate's arches are
 * runs of the one run pipeline, stored with the gate in one step (startGate); reading a gate only
 * reads.
 */
export function createGateRoutes(deps: GateRoutesDeps): RouteHandler {
  const {
    gates,
    runs,
    tokens,
    releaseController,
    publicUrl,
    log,
    now = () => new Date(),
    newId = () => randomBytes(16).toString("hex"),
  } = deps;
  const openApi = `${JSON.stringify(gateOpenApiDocument(), null, 2)}\n`;

  async function postGate(req: IncomingMessage, res: ServerResponse): Promise<true> {
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
      ...(request.clusters !== undefined ? { clusters: request.clusters } : {}),
      createdAt: now().toISOString(),
      requestKey: gateRequestKey({ ...request, baselinePayload }),
    };
    let started;
    try {
      started = await startGate({ gates, runs, runSettings: deps.runSettings, now }, gate);
    } catch (error) {
      // Whatever was stored stands whole (the gate with all its runs, or nothing): the request sent
      // again joins the gate and queues its runs.
      log.error({ err: error, payload: gate.payload, stream: gate.stream }, "gate not queued");
      return problem(res, 503, "Gate not queued", "the gate could not be queued; send the request again");
    }
    const { id, created, found } = started;
    if (created) {
      log.info(
        { gateId: id, payload: gate.payload, baselinePayload, stream: gate.stream, arches: gate.arches },
        "gate started",
      );
    }
    if (!found) return problem(res, 503, "Gate vanished", "the gate expired while it was read; try again");
    return sendJson(res, created ? 202 : 200, gateView(found, publicUrl), {
      location: `${publicUrl}/api/v1/gates/${id}`,
    });
  }

  async function showReport(res: ServerResponse, id: string, arch: string): Promise<boolean> {
    const parsedArch = archSchema.safeParse(arch);
    if (!parsedArch.success || !(await gates.get(id))) return false;
    const run = await runs.store.get(gateRunId(id, parsedArch.data));
    if (await sendReport(res, { dataDir: deps.dataDir, reportPath: run?.reportPath })) return true;
    return problem(res, 404, "No report yet", "this arch has no report (yet)");
  }

  return async (req, res) => {
    const path = new URL(req.url ?? "/", "http://bot").pathname;
    const report = /^\/gates\/([0-9a-f]{32})\/([a-z0-9]+)\/report$/.exec(path);
    if (report && (req.method === "GET" || req.method === "HEAD"))
      return showReport(res, report[1]!, report[2]!);
    if (path === "/api/v1/openapi.json" && req.method === "GET") {
      return send(res, 200, "application/json", openApi);
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
      if (req.method === "POST") return postGate(req, res);
      return problem(res, 405, "Method not allowed", "POST a gate request here", {}, { allow: "POST" });
    }
    const match = /^\/api\/v1\/gates\/([^/]+)$/.exec(path);
    if (!match || req.method !== "GET") return problem(res, 404, "Not found", "no such gate API resource");
    const found = /^[0-9a-f]{32}$/.test(match[1]!)
      ? await readGate({ gates, runs: runs.store }, match[1]!)
      : undefined;
    if (!found) return problem(res, 404, "No such gate", `no gate ${match[1]}`);
    return sendJson(res, 200, gateView(found, publicUrl));
  };
}
