import http from "node:http";
import https from "node:https";
import type { CheckOutcome, CheckTarget } from "./run-checker.ts";
import type { ProbeTarget } from "./probe-target.ts";

/**
 * Probes over real connections. A `new` probe opens a connection, asks once and closes it; a
 * `reused` probe keeps one keep-alive connection per target and asks over it every time, so an
 * established connection that breaks (reset, timed out, closed under it) fails the probe that
 * notices, even when a fresh connection would already work again.
 */
export function createHttpCheck(options: { env: NodeJS.ProcessEnv }): CheckTarget & { close(): void } {
  const agents = new Map<string, http.Agent>();
  const connected = new Set<string>();
  const keyOf = (t: ProbeTarget) => `${t.path}\u0000${t.connection}\u0000${t.name}`;
  const check = (target: ProbeTarget, signal: AbortSignal): Promise<CheckOutcome> => {
    const apiserver = target.kind === "apiserver";
    const host = target.host || (apiserver ? (options.env.KUBERNETES_SERVICE_HOST ?? "") : "");
    const port = target.port || (apiserver ? Number(options.env.KUBERNETES_SERVICE_PORT ?? 443) : 0);
    if (!host || !port) return Promise.resolve({ ok: false, reason: "no address to probe" });
    const key = keyOf(target);
    const reused = target.connection === "reused";
    let agent: http.Agent | false = false;
    if (reused) {
      agent =
        agents.get(key) ??
        (apiserver
          ? new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false })
          : new http.Agent({ keepAlive: true, maxSockets: 1 }));
      agents.set(key, agent);
    }
    return new Promise<CheckOutcome>((resolve) => {
      const settle = (outcome: CheckOutcome) => {
        signal.removeEventListener("abort", onAbort);
        resolve(outcome);
      };
      const request = (apiserver ? https : http).request({
        host,
        port,
        path: apiserver ? "/readyz" : "/healthz",
        method: "GET",
        agent,
        // Reachability only: no credentials are sent, so the API server's certificate is not checked.
        ...(apiserver ? { rejectUnauthorized: false } : {}),
        headers: reused ? { connection: "keep-alive" } : { connection: "close" },
      });
      const onAbort = () => request.destroy(new Error(`no answer within the probe timeout`));
      signal.addEventListener("abort", onAbort, { once: true });
      request.on("error", (error: NodeJS.ErrnoException) => {
        // The connection this probe relied on is gone: the next one starts afresh.
        connected.delete(key);
        settle({ ok: false, reason: describe(error) });
      });
      request.on("response", (response) => {
        response.resume();
        response.on("end", () => {
          if (!apiserver && response.statusCode !== 200) {
            return settle({ ok: false, reason: `HTTP ${response.statusCode}` });
          }
          if (reused && connected.has(key) && !request.reusedSocket) {
            // Answered, but on a new connection: the established one was closed under the probe.
            return settle({ ok: false, reason: "the established connection was closed" });
          }
          if (reused) connected.add(key);
          settle({ ok: true });
        });
        response.on("error", (error) => settle({ ok: false, reason: describe(error) }));
      });
      request.end();
    });
  };
  return Object.assign(check, {
    close() {
      for (const agent of agents.values()) agent.destroy();
      agents.clear();
    },
  });
}

function describe(error: NodeJS.ErrnoException): string {
  return error.code ? `${error.code}: ${error.message}` : error.message;
}
