import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { collectQueueGauges } from "../../src/observability/collect-queue-gauges.ts";
import { createLogger } from "../../src/observability/create-logger.ts";
import { instrumentOctokit } from "../../src/observability/instrument.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { TestOctokit } from "../helpers/github-octokit.ts";
import { metricValue } from "../helpers/metric-value.ts";

let redis: Redis;
beforeAll(() => {
  redis = new Redis(inject("redisUrl"), { maxRetriesPerRequest: null });
});
afterAll(async () => {
  await redis.quit();
});

describe("metrics", () => {
  it("reports queue depth by state and how long the oldest job has waited", async () => {
    const queue = new Queue("resolve", {
      connection: redis,
      prefix: `test-queue-gauges-${process.pid}-${Date.now()}`,
    });
    try {
      await queue.add("a", {}, { timestamp: 1_000_000 });
      await queue.add("b", {}, { timestamp: 1_030_000 });
      await queue.add("c", {}, { delay: 60_000 });
      const metrics = createMetrics({ defaultMetrics: false });
      metrics.onCollect((gauges) => collectQueueGauges(gauges, [queue], () => 1_100_000));
      const text = await metrics.registry.metrics();
      expect(metricValue(text, 'netstress_queue_jobs{queue="resolve",state="waiting"}')).toBe(2);
      expect(metricValue(text, 'netstress_queue_jobs{queue="resolve",state="delayed"}')).toBe(1);
      expect(metricValue(text, 'netstress_queue_jobs{queue="resolve",state="active"}')).toBe(0);
      expect(metricValue(text, 'netstress_queue_oldest_waiting_seconds{queue="resolve"}')).toBe(100);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });

  it("counts Kubernetes API errors per cluster and status", async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.kubernetesApiError({ cluster: "build01", status: 500 });
    metrics.kubernetesApiError({ cluster: "build01", status: 500 });
    metrics.kubernetesApiError({ cluster: "build05", status: undefined });
    const text = await metrics.registry.metrics();
    expect(metricValue(text, 'netstress_kubernetes_api_errors_total{cluster="build01",status="500"}')).toBe(
      2,
    );
    expect(metricValue(text, 'netstress_kubernetes_api_errors_total{cluster="build05",status="none"}')).toBe(
      1,
    );
  });

  it("keeps the GitHub rate limit an installation has left, from successful and failed responses", async () => {
    let remaining = 4999;
    const github: Server = createServer((req, res) => {
      const status = req.url?.includes("missing") ? 404 : 200;
      res.writeHead(status, {
        "content-type": "application/json",
        "x-ratelimit-remaining": String(remaining--),
        "x-ratelimit-resource": "core",
      });
      res.end(
        status === 200 ? JSON.stringify({ login: "netstress" }) : JSON.stringify({ message: "Not Found" }),
      );
    });
    await new Promise<void>((resolve) => github.listen(0, "127.0.0.1", resolve));
    try {
      const metrics = createMetrics({ defaultMetrics: false });
      const octokit = instrumentOctokit(
        new TestOctokit({
          auth: { token: "t" },
          baseUrl: `http://127.0.0.1:${(github.address() as AddressInfo).port}`,
          log: pino({ level: "silent" }),
        }),
        metrics,
        4242,
      );
      await octokit.request("GET /user");
      expect(
        metricValue(
          await metrics.registry.metrics(),
          'netstress_github_rate_limit_remaining{installation="4242",resource="core"}',
        ),
      ).toBe(4999);
      await expect(
        octokit.request("GET /repos/{owner}/{repo}", { owner: "o", repo: "missing" }),
      ).rejects.toThrow();
      expect(
        metricValue(
          await metrics.registry.metrics(),
          'netstress_github_rate_limit_remaining{installation="4242",resource="core"}',
        ),
      ).toBe(4998);
    } finally {
      github.close();
    }
  });
});

describe("logs", () => {
  it("are JSON lines that never carry bearer tokens or webhook signatures", () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString("utf8").trim().split("\n"));
        done();
      },
    });
    const log = createLogger({ level: "info", destination });
    log.child({ deliveryId: "d-1" }).info(
      {
        runId: "r-1",
        req: {
          method: "POST",
          headers: {
            authorization: "Bearer s3cr3t-gate-token",
            "x-hub-signature-256": "sha256=abc",
            host: "bot",
          },
        },
      },
      "request completed",
    );
    const entry = JSON.parse(lines[0]!);
    expect(entry).toMatchObject({
      name: "netstress",
      level: 30,
      deliveryId: "d-1",
      runId: "r-1",
      msg: "request completed",
    });
    expect(entry.req.headers).toEqual({
      authorization: "[redacted]",
      "x-hub-signature-256": "[redacted]",
      host: "bot",
    });
    expect(lines.join("\n")).not.toContain("s3cr3t");
  });
});
