import { request } from "node:http";
import { connect } from "node:net";
import type { PodProbe } from "../sim/pod-network.ts";

/** A readiness check as the lab's kubelet asks its node's prober for it (IPC message). */
export interface ProbeRequest extends Omit<PodProbe, "nodeName"> {
  id: number;
}

/**
 * One readiness check from where it runs (a node's namespace): an HTTP GET that must answer
 * 2xx or 3xx, or a TCP connect, within timeoutMs.
 */
export function runProbe(check: Omit<ProbeRequest, "id">): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(false), check.timeoutMs);
    let finished = false;
    const cleanups: (() => void)[] = [];
    const done = (ok: boolean) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      for (const cleanup of cleanups) cleanup();
      resolve(ok);
    };
    if (check.kind === "tcp") {
      const socket = connect({ host: check.host, port: check.port }, () => done(true));
      socket.on("error", () => done(false));
      cleanups.push(() => socket.destroy());
      return;
    }
    const req = request(
      { host: check.host, port: check.port, path: check.path ?? "/", method: "GET", agent: false },
      (res) => {
        res.resume();
        done((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 400);
      },
    );
    req.on("error", () => done(false));
    cleanups.push(() => req.destroy());
    req.end();
  });
}
