import { setTimeout as sleep } from "node:timers/promises";
import { createServer } from "node:http";
import type { LabApiGet } from "./lab-api-client.ts";
import { runIp } from "./run-ip.ts";

/** The routing protocol number the agent marks its routes with, so that it knows (and flushes) its own. */
export const AGENT_ROUTE_PROTOCOL = "77";
/** Where the agent answers its readiness probe (`GET /healthz`: 200 once its routes are programmed). */
export const AGENT_HEALTH_PORT = 29105;
/** How long the PR build's agent leaves its node without routes after flushing them on start. */
export const PR_BUILD_FLUSH_GAP_MS = 2000;

export type AgentBuild = "released" | "pr";

interface NodeList {
  items: {
    metadata: { name: string };
    spec?: { podCIDR?: string };
    status?: { addresses?: { type: string; address: string }[] };
  }[];
}

interface Route {
  dst: string;
  gateway?: string;
}

/**
 * The lab's `ovnkube-node`: in its node's namespace (host network) it keeps one route per other
 * node — that node's pod CIDR via its InternalIP — read from the Node objects and reconciled every
 * `resyncMs`. The released build starts by reconciling what is there (no gap) and leaves its routes
 * in place when stopped; the PR build has a restart bug: on start it flushes its routes and waits
 * PR_BUILD_FLUSH_GAP_MS before it programs them again (cross-node pod traffic is lost meanwhile).
 * Resolves once `signal` aborts (SIGTERM), routes untouched.
 */
export async function runNodeAgent(options: {
  build: AgentBuild;
  nodeName: string;
  api: LabApiGet;
  signal: AbortSignal;
  log: (message: string, fields?: Record<string, unknown>) => void;
  resyncMs?: number;
  /** Serve `/healthz` on this port of every address (default: no health endpoint). */
  healthPort?: number;
}): Promise<void> {
  const { api, signal, log } = options;
  let programmed = false;
  const health = createServer((req, res) => {
    res.writeHead(programmed ? 200 : 503, { "content-type": "text/plain" });
    res.end(programmed ? "ok" : "routes not programmed yet");
  });
  if (options.healthPort !== undefined) {
    const port = options.healthPort;
    // The pod it replaces may still hold the port for a moment.
    const listen = () => health.listen(port);
    health.on("error", () => setTimeout(listen, 200));
    listen();
  }
  signal.addEventListener("abort", () => health.close(), { once: true });
  const desired = async (): Promise<Map<string, string>> => {
    const nodes = await api<NodeList>("/api/v1/nodes");
    const routes = new Map<string, string>();
    for (const node of nodes.items) {
      const ip = node.status?.addresses?.find((a) => a.type === "InternalIP")?.address;
      const cidr = node.spec?.podCIDR;
      if (node.metadata.name !== options.nodeName && ip && cidr) routes.set(cidr, ip);
    }
    return routes;
  };
  const reconcile = async (routes: Map<string, string>) => {
    const current = JSON.parse(
      (await runIp(["-j", "route", "show", "proto", AGENT_ROUTE_PROTOCOL])) || "[]",
    ) as Route[];
    for (const [dst, via] of routes) {
      if (current.some((r) => r.dst === dst && r.gateway === via)) continue;
      await runIp(["route", "replace", dst, "via", via, "proto", AGENT_ROUTE_PROTOCOL]);
      log("route programmed", { dst, via });
    }
    for (const route of current) {
      if (routes.has(route.dst)) continue;
      await runIp(["route", "del", route.dst, "proto", AGENT_ROUTE_PROTOCOL], { allowFailure: true });
      log("route removed", { dst: route.dst });
    }
  };
  log("starting", { build: options.build, node: options.nodeName });
  let routes: Map<string, string> | undefined;
  while (!routes && !signal.aborted) {
    routes = await desired().catch((error: unknown) => {
      log("cannot read nodes, retrying", { error: String(error) });
      return undefined;
    });
    if (!routes) await sleep(500, undefined, { signal }).catch(() => undefined);
  }
  if (signal.aborted || !routes) return;
  if (options.build === "pr") {
    await runIp(["route", "flush", "proto", AGENT_ROUTE_PROTOCOL]);
    log("routes flushed", { gapMs: PR_BUILD_FLUSH_GAP_MS });
    await sleep(PR_BUILD_FLUSH_GAP_MS, undefined, { signal }).catch(() => undefined);
    if (signal.aborted) return;
  }
  await reconcile(routes);
  programmed = true;
  log("ready", { routes: routes.size });
  while (!signal.aborted) {
    await sleep(options.resyncMs ?? 1000, undefined, { signal }).catch(() => undefined);
    if (signal.aborted) break;
    const next = await desired().catch(() => undefined);
    if (next)
      await reconcile(next).catch((error: unknown) => log("reconcile failed", { error: String(error) }));
  }
  log("stopping: routes left in place");
}
