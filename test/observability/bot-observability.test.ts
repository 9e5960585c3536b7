import { writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/github-api.ts";
import { deliverWebhook } from "../helpers/github-deliveries.ts";
import { commentPayload } from "../helpers/github-payloads.ts";
import { gateRunId } from "../../src/gate/gate-store.ts";
import { createPayloadPlanResolver } from "../../src/queue/payload-plan-resolver.ts";
import { createRegistry } from "../../src/registry/create-registry.ts";
import { controlledExecutor, fixedResolver, startTestBot, type TestBot } from "../helpers/github-test-bot.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { metricValue } from "../helpers/metric-value.ts";

const TOKEN = "observability-test-gate-token-000000";
// Payloads on a loopback port nothing listens on: the gate worker's registry look-ups fail at once, here.
const LATEST = "127.0.0.1:9/ocp/release:4.19.0-0.nightly-1";
const CANDIDATE = "127.0.0.1:9/ocp/release:candidate";
let t: TestBot;
let control: ReturnType<typeof controlledExecutor>;
let releaseController: Server;
let removeDir: () => Promise<void>;

beforeAll(async () => {
  releaseController = createServer((_, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ name: "4.19.0-0.nightly-1", pullSpec: LATEST, phase: "Accepted" }));
  });
  await new Promise<void>((resolve) => releaseController.listen(0, "127.0.0.1", resolve));
  const dir = await tempDir("netstress-observability-");
  removeDir = dir.remove;
  await writeFile(join(dir.path, "tokens"), `${TOKEN}\n`);
  control = controlledExecutor();
  const cacheDir = join(dir.path, "cache");
  // Gate runs resolve their payloads for real (and fail: nothing listens there); PR runs get a fixed plan.
  const payloads = createPayloadPlanResolver({ registry: await createRegistry({ cacheDir }) });
  const fixed = fixedResolver();
  t = await startTestBot({
    github: { members: ["alice"], config: "arches: [amd64, arm64]\n" },
    executor: control.executor,
    resolvePlan: (input) => (input.run.subject.kind === "gate" ? payloads(input) : fixed(input)),
    gate: {
      tokensPath: join(dir.path, "tokens"),
      releaseControllerUrl: `http://127.0.0.1:${(releaseController.address() as AddressInfo).port}`,
      parallel: 2,
      timeoutMinutes: 60,
    },
  });
});
afterAll(async () => {
  await t.stop();
  releaseController.close();
  await removeDir();
});

describe("netstress serve observability", () => {
  it("counts webhooks, runs by state, queues and shards at /metrics, and lists recent runs at /runs", async () => {
    expect(
      (
        await t.deliver(
          "issue_comment",
          commentPayload({ body: "/test network-stress arch=amd64,arm64 iterations=5 baseline=none" }),
        )
      ).status,
    ).toBe(200);
    const forged = await deliverWebhook({
      url: `${t.bot.url}${t.settings.webhookPath}`,
      secret: "not-the-secret",
      name: "issue_comment",
      payload: commentPayload({ body: "/test network-stress" }),
    });
    expect(forged.status).toBeGreaterThanOrEqual(400);
    await eventually(() => control.running.size === 2);

    const running = await (await fetch(`${t.bot.internalUrl}/metrics`)).text();
    expect(
      metricValue(running, 'netstress_webhooks_received_total{event="issue_comment",status="200"}'),
    ).toBe(1);
    expect(
      metricValue(
        running,
        `netstress_webhooks_rejected_total{event="issue_comment",status="${forged.status}"}`,
      ),
    ).toBe(1);
    expect(metricValue(running, 'netstress_runs_active{state="running"}')).toBe(2);
    expect(metricValue(running, 'netstress_queue_jobs{queue="execute",state="active"}')).toBe(2);
    expect(metricValue(running, 'netstress_queue_oldest_waiting_seconds{queue="resolve"}')).toBe(0);
    expect(running).toContain("# TYPE netstress_shard_duration_seconds histogram");

    const [first] = [...control.running.keys()];
    await control.complete(first!);
    // The gauge is read from the store at each scrape; the transition is counted when the worker
    // gets to it, a moment later. Wait for both.
    const finished = await eventually(async () => {
      const text = await (await fetch(`${t.bot.internalUrl}/metrics`)).text();
      return (
        metricValue(text, 'netstress_runs_active{state="running"}') === 1 &&
        metricValue(text, 'netstress_run_transitions_total{state="completed",conclusion="success"}') !==
          undefined &&
        text
      );
    });
    expect(finished).toMatch(
      /netstress_shard_duration_seconds_count\{arch="(amd64|arm64)",executor="test",status="completed"\} 1/,
    );
    expect(
      metricValue(finished, 'netstress_run_transitions_total{state="completed",conclusion="success"}'),
    ).toBe(1);

    const index = await fetch(`${t.bot.internalUrl}/runs`);
    expect(index.status).toBe(200);
    const html = await index.text();
    const runs = await t.store.listForPullRequest("openshift", "ovn-kubernetes", 7);
    for (const run of runs) expect(html).toContain(`<a href="runs/${run.id}">openshift/ovn-kubernetes#7</a>`);
    expect(html).toContain("success");
    expect(html).toContain("running");
  });

  it("mounts the gate API beside the webhooks, and counts and lists a gate's runs from their start", async () => {
    const queuedRuns = async () =>
      metricValue(
        await (await fetch(`${t.bot.internalUrl}/metrics`)).text(),
        'netstress_run_transitions_total{state="queued",conclusion=""}',
      ) ?? 0;
    const queuedBefore = await queuedRuns();
    const response = await fetch(`${t.bot.url}/api/v1/gates`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({
        payload: CANDIDATE,
        stream: "4.19.0-0.nightly",
        arches: ["amd64"],
        iterations: 10,
      }),
    });
    expect(response.status).toBe(202);
    const gate = (await response.json()) as { id: string; baselinePayload: string };
    expect(gate.baselinePayload).toBe(LATEST);
    // Stored with its gate, the run is a queued run like any other: counted, and on /runs.
    expect(await queuedRuns()).toBe(queuedBefore + 1);
    const runId = gateRunId(gate.id, "amd64");
    expect(await (await fetch(`${t.bot.internalUrl}/runs`)).text()).toContain(`runs/${runId}`);
    // The bot's workers take the gate's run; payloads it cannot read end it Inconclusive with the reason.
    const ended = await eventually(async () => {
      const read = await fetch(`${t.bot.url}/api/v1/gates/${gate.id}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      const body = (await read.json()) as {
        state: string;
        verdict?: string;
        arches: { reasons: string[] }[];
      };
      return body.state === "completed" && body;
    });
    expect(ended.verdict).toBe("Inconclusive");
    expect(ended.arches[0]!.reasons[0]).toMatch(
      /^the (candidate|baseline) payload 127\.0\.0\.1:9\/ocp\/release:\S+ cannot be resolved to a digest: /,
    );
    expect((await fetch(`${t.bot.url}/api/v1/gates`, { method: "POST" })).status).toBe(401);
    expect((await fetch(`${t.bot.url}/api/v1/openapi.json`)).status).toBe(200);
  });
});
