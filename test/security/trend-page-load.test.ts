import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createHistoryStore } from "../../src/history/history-store.ts";
import { createStoredTrendViews } from "../../src/trends/stored-trend-views.ts";
import { createTrendRoutes } from "../../src/trends/trend-routes.ts";

const STREAM = "4.21.0-0.nightly";
const PAYLOADS = 14;
const BROKEN = 300;

let redis: Redis;
let http: Server;
let url: string;
let historyReads = 0;

/** A history whose first-bad-payload scan costs seconds: hundreds of tests that broke at some payload. */
beforeAll(async () => {
  redis = new Redis(inject("redisUrl"));
  const prefix = `trend-load-${randomUUID()}`;
  const store = createHistoryStore({ redis, prefix });
  const history = {
    ...store,
    readPayloadHistory: (input: Parameters<typeof store.readPayloadHistory>[0]) => {
      historyReads += 1;
      return store.readPayloadHistory(input);
    },
  };
  for (let index = 0; index < PAYLOADS; index++) {
    await store.record({
      stream: STREAM,
      arch: "amd64",
      runId: `run-${index}`,
      payload: { pullspec: `registry.test/ocp/release@sha256:${index.toString(16).padStart(64, "0")}` },
      tests: Array.from({ length: BROKEN }, (_, t) => ({
        name: `[sig-network] test ${t}`,
        runs: 10,
        passes: index >= 2 + (t % 10) ? 6 : 10,
      })),
    });
  }
  const routes = createTrendRoutes({
    views: createStoredTrendViews({
      history,
      // No registry here: every pair's changes are unknown, which the page says.
      changesBetween: async () => new Error("no registry in this test"),
      redis,
      prefix,
    }),
  });
  http = createServer((req, res) => {
    void Promise.resolve(routes(req, res)).then((handled) => handled || res.writeHead(404).end());
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/streams/${STREAM}/amd64`;
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => http?.close(resolve));
  await redis?.quit();
});

describe("the trend page on the public port", () => {
  it("never computes on the request path: concurrent requests leave the event loop free, and the view comes once computed", async () => {
    // The client shares this event loop: its first fetch loads undici, which is not the server's doing.
    await (await fetch(url.replace(/streams.*/, "elsewhere"))).text();
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(url)));
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 20 }, () => 503));
    await expect.poll(async () => (await fetch(url)).status, { timeout: 60_000, interval: 200 }).toBe(200);
    delay.disable();
    // One computation for every request of this history; the scan (seconds of CPU per request
    // when it ran on the request path) ran in a worker thread, so this loop never stalled for
    // long — the bound is loose because the machine running the tests may be loaded many times over.
    expect(historyReads).toBe(1);
    expect(delay.max / 1e6).toBeLessThan(2000);
    await fetch(url);
    expect(historyReads).toBe(1);
    const page = await (await fetch(url)).text();
    expect(page).toContain("[sig-network] test 7");
  }, 90_000);
});
