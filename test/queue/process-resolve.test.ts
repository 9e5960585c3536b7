import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ShardExecutor } from "../../src/runs/shard-executor.ts";
import type { PlanResolution } from "../../src/runs/plan-resolver.ts";
import { processResolve } from "../../src/queue/process-resolve.ts";
import type { RunRecord } from "../../src/runs/run-record.ts";
import { runRecord, testRunDeps } from "../helpers/github-run-deps.ts";

let env: Awaited<ReturnType<typeof testRunDeps>>;
beforeEach(async () => {
  env = await testRunDeps();
});
afterEach(async () => env.close());

const executor: ShardExecutor = {
  name: "local",
  arches: async () => ["amd64"],
  execute: async () => ({ status: "failed", reason: "not in this test" }),
};
const plan = {
  arch: "amd64" as const,
  arms: [{ arm: "pr" as const, components: [{ component: "sdn", binary: "/b" }] }],
};

async function resolveWith(run: RunRecord, answers: (PlanResolution | Error)[], now = () => new Date()) {
  await env.deps.store.create(run);
  const resolvePlan = async () => {
    const answer = answers.shift()!;
    if (answer instanceof Error) throw answer;
    return answer;
  };
  await processResolve(env.deps, { resolvePlan, executor, imageWaitStepMs: 1_000, now }, run.id);
  return (await env.deps.store.get(run.id))!;
}

const jobs = async (state: "delayed" | "waiting") =>
  state === "delayed" ? env.deps.queues.resolve.getDelayed() : env.deps.queues.execute.getWaiting();

describe("the resolve stage", () => {
  it("plans the run and queues its execution, showing the plan on the queued check run", async () => {
    const run = await resolveWith(runRecord(), [{ kind: "ready", plan }]);
    expect(run).toMatchObject({ state: "queued", plan });
    expect((await jobs("waiting")).map((j) => j.data.runId)).toEqual([run.id]);
    const check = env.github.checkRunWrites().at(-1)!.body;
    expect(check.status).toBe("queued");
    expect((check.output as { summary: string }).summary).toContain("| pr | sdn |");
  });

  it("waits visibly for missing PR images, backing off, and gives up with a clear message", async () => {
    const missing = ["quay.io/ci/ovn-kubernetes:pr7-ovn-kubernetes"];
    const t0 = new Date("2026-01-01T00:00:00Z");
    let run = await resolveWith(
      runRecord({ source: { ...runRecord().source, imageWaitMinutes: 5 } }),
      [{ kind: "images-pending", missing }],
      () => t0,
    );
    expect(run).toMatchObject({
      state: "waiting-for-images",
      imageWait: { attempts: 1, missing, next: "2026-01-01T00:00:01.000Z" },
    });
    const check = env.github.checkRunWrites().at(-1)!.body;
    expect(check).toMatchObject({ status: "queued", output: { title: "Waiting for PR images (amd64)" } });
    const [delayed] = await jobs("delayed");
    expect(delayed!.opts.delay).toBe(1_000);

    // The second look waits twice as long.
    await processResolve(
      env.deps,
      {
        resolvePlan: async () => ({ kind: "images-pending", missing }),
        executor,
        imageWaitStepMs: 1_000,
        now: () => new Date(t0.getTime() + 1_000),
      },
      run.id,
    );
    run = (await env.deps.store.get(run.id))!;
    expect(run.imageWait).toMatchObject({
      attempts: 2,
      since: t0.toISOString(),
      next: "2026-01-01T00:00:03.000Z",
    });

    // Past the configured wait, the run concludes and says which images never appeared.
    await processResolve(
      env.deps,
      {
        resolvePlan: async () => ({ kind: "images-pending", missing }),
        executor,
        now: () => new Date(t0.getTime() + 5 * 60_000),
      },
      run.id,
    );
    run = (await env.deps.store.get(run.id))!;
    expect(run).toMatchObject({ state: "completed", conclusion: "action_required" });
    expect(run.reason).toBe(
      "the PR's images did not appear within 5 minutes: quay.io/ci/ovn-kubernetes:pr7-ovn-kubernetes; publish them, then press Re-run",
    );
  });

  it("concludes action_required when no executor runs the arch", async () => {
    const run = await resolveWith(runRecord({ arch: "s390x" }), []);
    expect(run).toMatchObject({
      conclusion: "action_required",
      reason: "no local executor runs s390x (available: amd64)",
    });
    expect(env.github.checkRunWrites().at(-1)!.body).toMatchObject({
      status: "completed",
      conclusion: "action_required",
    });
  });

  it("concludes action_required for a history baseline without a release stream to pool", async () => {
    const run = await resolveWith(runRecord({ options: { iterations: 5, baseline: "history" } }), []);
    expect(run.conclusion).toBe("action_required");
    expect(run.reason).toMatch(/^baseline=history compares with the pooled history of a release stream/);
  });

  it("concludes with the resolver's verdict or error", async () => {
    const unavailable = await resolveWith(runRecord(), [
      { kind: "unavailable", conclusion: "failure", reason: "no amd64 build" },
    ]);
    expect(unavailable).toMatchObject({ conclusion: "failure", reason: "no amd64 build" });
    const crashed = await resolveWith(runRecord(), [new Error("registry unreachable")]);
    expect(crashed).toMatchObject({
      conclusion: "failure",
      reason: "plan resolution failed: registry unreachable",
    });
  });
});
