import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpCheck } from "@netstress/network-extension/http-check.ts";
import type { ProbeLine, ProbeStateLine } from "@netstress/network-extension/probe-line.ts";
import type { ProbeTarget } from "@netstress/network-extension/probe-target.ts";
import { runChecker, type CheckOutcome } from "@netstress/network-extension/run-checker.ts";
import { startProbeServer } from "@netstress/network-extension/start-probe-server.ts";

const target = (o: Partial<ProbeTarget> & { port: number }): ProbeTarget => ({
  path: "pod-to-pod-same-node",
  connection: "new",
  name: "server",
  kind: "http",
  host: "127.0.0.1",
  ...o,
});
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

describe("the checker loop", () => {
  it("prints a target's first outcome and then only its changes", async () => {
    const outcomes: CheckOutcome[] = [
      { ok: true },
      { ok: true },
      { ok: false, reason: "ETIMEDOUT" },
      { ok: false, reason: "ETIMEDOUT" },
      { ok: true },
    ];
    const lines: ProbeLine[] = [];
    const controller = new AbortController();
    let calls = 0;
    await runChecker({
      targets: [target({ port: 1 })],
      source: "client",
      intervalMs: 5,
      timeoutMs: 100,
      check: async () => {
        const next = outcomes[calls++];
        if (!next) {
          controller.abort();
          return { ok: true };
        }
        return next;
      },
      emit: (l) => lines.push(l),
      signal: controller.signal,
    });
    const states = lines.filter((l): l is ProbeStateLine => l.event === "state");
    expect(states.map((s) => [s.ok, s.reason])).toEqual([
      [true, undefined],
      [false, "ETIMEDOUT"],
      [true, undefined],
    ]);
    expect(states[0]).toMatchObject({
      source: "client",
      target: "server",
      path: "pod-to-pod-same-node",
      connection: "new",
    });
  });
});

describe("probes over real connections", () => {
  it("sees a probe server go away and come back, over new connections", async () => {
    const server = await startProbeServer({ port: 0, host: "127.0.0.1", name: "srv" });
    const port = server.port;
    const check = createHttpCheck({ env: {} });
    cleanups.push(() => check.close());
    const t = target({ port });
    expect(await check(t, AbortSignal.timeout(1000))).toEqual({ ok: true });
    await server.close();
    const down = await check(t, AbortSignal.timeout(1000));
    expect(down).toMatchObject({ ok: false, reason: expect.stringContaining("ECONNREFUSED") });
    const again = await startProbeServer({ port, host: "127.0.0.1", name: "srv" });
    cleanups.push(() => again.close());
    expect(await check(t, AbortSignal.timeout(1000))).toEqual({ ok: true });
  });

  it("fails a reused-connection probe when the established connection was closed under it, then holds on the new one", async () => {
    const sockets = new Set<Socket>();
    const server = http.createServer((_req, res) => res.end("ok"));
    server.keepAliveTimeout = 60_000;
    server.on("connection", (s) => sockets.add(s));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
    const check = createHttpCheck({ env: {} });
    cleanups.push(() => check.close());
    const t = target({ port: (server.address() as AddressInfo).port, connection: "reused" });
    expect(await check(t, AbortSignal.timeout(1000))).toEqual({ ok: true });
    expect(await check(t, AbortSignal.timeout(1000))).toEqual({ ok: true });
    for (const s of sockets) s.destroy();
    await new Promise((r) => setTimeout(r, 50));
    expect(await check(t, AbortSignal.timeout(1000))).toMatchObject({ ok: false });
    expect(await check(t, AbortSignal.timeout(1000))).toEqual({ ok: true });
  });

  it("fails a probe that gets no answer within its timeout", async () => {
    const server = http.createServer(() => undefined); // accepts, never answers
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
    const check = createHttpCheck({ env: {} });
    const started = Date.now();
    const outcome = await check(
      target({ port: (server.address() as AddressInfo).port }),
      AbortSignal.timeout(200),
    );
    expect(outcome).toMatchObject({ ok: false, reason: expect.stringContaining("timeout") });
    expect(Date.now() - started).toBeLessThan(1500);
  });
});
