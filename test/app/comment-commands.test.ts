import { randomUUID } from "node:crypto";
import { Queue } from "bullmq";
import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../helpers/github-api.ts";
import { commentPayload, HEAD_SHA } from "../helpers/github-payloads.ts";
import {
  controlledExecutor,
  fixedResolver,
  startTestBot,
  TEST_APP_ID,
  type TestBot,
} from "../helpers/github-test-bot.ts";

let t: TestBot | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const runsOfPr = () => t!.store.listForPullRequest("openshift", "ovn-kubernetes", 7);

describe("comment commands", () => {
  it("starts one queued check run per arch of the head commit for a member's /test", async () => {
    const control = controlledExecutor();
    t = await startTestBot({
      github: { members: ["alice"], config: "arches: [amd64, arm64]\n" },
      executor: control.executor,
    });
    const response = await t.deliver(
      "issue_comment",
      commentPayload({ body: "/test network-stress arch=amd64,arm64 iterations=5 baseline=none" }),
    );
    expect(response.status).toBe(200);
    const created = await eventually(() => {
      const posts = t!.github.writes.filter((w) => w.method === "POST" && w.path.endsWith("/check-runs"));
      return posts.length === 2 && posts;
    });
    expect(created.map((w) => w.body.name).sort()).toEqual([
      "network-stress (amd64)",
      "network-stress (arm64)",
    ]);
    for (const { body } of created) {
      expect(body).toMatchObject({
        head_sha: HEAD_SHA,
        status: "queued",
        external_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      });
      expect((body.output as { title: string }).title).toMatch(
        /^Queued — 5 iterations, PR only \((amd64|arm64)\)$/,
      );
    }
    await eventually(() => control.running.size === 2);
    const runs = await runsOfPr();
    expect(runs.map((r) => [r.state, r.options.iterations, r.subject.trigger.actor])).toEqual([
      ["running", 5, "alice"],
      ["running", 5, "alice"],
    ]);
  });

  it("handles a redelivered webhook once", async () => {
    t = await startTestBot({ github: { members: ["alice"] } });
    const id = randomUUID();
    const payload = commentPayload({ body: "/test network-stress\n/test network-stress colour=red" });
    expect((await t.deliver("issue_comment", payload, id)).status).toBe(200);
    expect((await t.deliver("issue_comment", payload, id)).status).toBe(200);
    await t.intakeHandled(1);
    expect(await runsOfPr()).toHaveLength(1);
    // Long after, when the queue no longer holds the job, GitHub redelivers it once more.
    const intake = new Queue("intake", { connection: t.redis, prefix: t.settings.queuePrefix });
    await intake.clean(0, 100, "completed");
    expect((await t.deliver("issue_comment", payload, id)).status).toBe(200);
    await eventually(async () => (await intake.getJobCounts("completed")).completed === 1);
    await intake.close();
    expect(await runsOfPr()).toHaveLength(1);
    expect(t.github.comments()).toHaveLength(1);
    expect(t.github.writes.filter((w) => w.method === "POST" && w.path.endsWith("/check-runs"))).toHaveLength(
      1,
    );
  });

  it("points the same command to the active run instead of starting a twin", async () => {
    t = await startTestBot({ github: { members: ["alice"] } });
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress iterations=3" }));
    const [first] = await eventually(async () => {
      const runs = await runsOfPr();
      return runs.length === 1 && runs;
    });
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress iterations=3" }));
    const [reply] = await eventually(() => t!.github.comments().length === 1 && t!.github.comments());
    expect(reply).toContain("`/test network-stress iterations=3` is already running for `aaaaaaaaaaaa`");
    expect(reply).toContain(`(http://bot.test/runs/${first!.id})`);
    expect(await runsOfPr()).toHaveLength(1);

    // Other options are another request.
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress iterations=4" }));
    await eventually(async () => (await runsOfPr()).length === 2);
  });

  it("answers an untrusted commenter once, politely, and runs nothing", async () => {
    t = await startTestBot({ github: { members: ["alice"], permissions: { mallory: "read" } } });
    await t.deliver(
      "issue_comment",
      commentPayload({
        body: "/test network-stress\n/retest\n/test network-stress abort",
        author: "mallory",
      }),
    );
    const [reply] = await eventually(() => t!.github.comments().length === 1 && t!.github.comments());
    expect(reply).toContain("Thanks, @mallory!");
    expect(reply).toContain("`/ok-to-test`");
    await t.intakeHandled(1);
    expect(t.github.comments()).toHaveLength(1);
    expect(t.github.checkRunWrites()).toEqual([]);
    expect(await runsOfPr()).toEqual([]);
  });

  it("replies once to bad options, naming option, allowed values and an example, and runs the good lines", async () => {
    t = await startTestBot({ github: { members: ["alice"], config: "limits: { max_iterations: 20 }\n" } });
    await t.deliver(
      "issue_comment",
      commentPayload({
        body: "/test network-stress iterations=50\n/test network-stress baseline=none\n/test network-stress colour=red",
      }),
    );
    const [reply] = await eventually(() => t!.github.comments().length === 1 && t!.github.comments());
    expect(reply).toContain("These 2 commands were not run:");
    expect(reply).toContain("`iterations=50` is not a number from 1 to 20");
    expect(reply).toContain(
      "Allowed: a whole number from 1 to 20. Example: `/test network-stress iterations=10`",
    );
    expect(reply).toContain("`colour=red` is not an option of /test network-stress");
    const runs = await eventually(async () => {
      const r = await runsOfPr();
      return r.length === 1 && r;
    });
    expect(runs[0]!.options.baseline).toBe("none");
  });

  it("shows the commands to anyone who asks with /test ?", async () => {
    t = await startTestBot({ github: { config: "limits: { max_iterations: 30, max_more: 12 }\n" } });
    await t.deliver("issue_comment", commentPayload({ body: "/test ?", author: "newcomer" }));
    const [reply] = await eventually(() => t!.github.comments().length === 1 && t!.github.comments());
    expect(reply).toContain("`/test network-stress more=N`");
    expect(reply).toContain("N is 1 to 30");
    expect(reply).toContain("adds N iterations (1 to 12)");
  });

  it("ignores the bot's own comments, comments on issues and comments without commands", async () => {
    t = await startTestBot({ github: { members: ["alice"] } });
    for (const payload of [
      commentPayload({
        body: "/test network-stress",
        viaAppId: TEST_APP_ID,
        author: "netstress[bot]",
        authorType: "Bot",
      }),
      commentPayload({ body: "/test network-stress", onIssue: true }),
      commentPayload({ body: "nice work! `/test network-stress` later" }),
    ]) {
      expect((await t.deliver("issue_comment", payload)).status).toBe(200);
    }
    const intake = new Queue("intake", { connection: t.redis, prefix: t.settings.queuePrefix });
    expect(await intake.getJobCounts()).toMatchObject({ waiting: 0, active: 0, completed: 0 });
    await intake.close();
    expect(t.github.writes).toEqual([]);
  });

  it("aborts the PR's active runs, naming who aborted", async () => {
    const control = controlledExecutor();
    t = await startTestBot({
      github: { members: ["alice", "bob"], config: "arches: [amd64, arm64]\n" },
      executor: control.executor,
    });
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress arch=amd64,arm64" }));
    await eventually(() => control.running.size === 2);
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress abort", author: "bob" }));
    const finals = await eventually(() => {
      const done = [...t!.github.latestCheckRuns().values()].filter((c) => c.status === "completed");
      return done.length === 2 && done;
    });
    for (const check of finals) {
      expect(check).toMatchObject({
        conclusion: "cancelled",
        output: { title: "Cancelled — aborted by @bob" },
      });
    }
    await eventually(() => control.running.size === 0);
    expect((await runsOfPr()).map((r) => r.conclusion)).toEqual(["cancelled", "cancelled"]);
  });

  it("adds iterations with more=N to the finished run, keeping its results and payloads", async () => {
    const control = controlledExecutor();
    const prPayload = "quay.io/netstress/pr-payloads@sha256:" + "7".repeat(64);
    t = await startTestBot({
      github: { members: ["alice"] },
      executor: control.executor,
      // The first run's PR arm is planned on a PR payload; `more` is not planned again.
      resolvePlan: async (input) => {
        const resolution = await fixedResolver()(input);
        return resolution.kind === "ready" ? { ...resolution, payloads: { pr: prPayload } } : resolution;
      },
    });
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress iterations=4" }));
    const [first] = await eventually(async () => {
      const runs = await runsOfPr();
      return runs[0] && control.running.has(runs[0].id) && runs;
    });
    await control.complete(first!.id);
    await eventually(async () => (await t!.store.get(first!.id))?.conclusion === "success");

    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress more=6" }));
    const more = await eventually(async () => {
      const runs = await runsOfPr();
      return runs.length === 2 && control.running.has(runs[0]!.id) && runs[0]!;
    });
    expect(more).toMatchObject({
      subject: { parentRunId: first!.id },
      firstIteration: 4,
      options: { iterations: 6 },
      payloads: { pr: prPayload },
    });
    expect(control.running.get(more.id)!.input.shard.iterations).toEqual({ first: 4, count: 6 });
    await control.complete(more.id);
    const done = await eventually(async () => {
      const run = await t!.store.get(more.id);
      return run?.state === "completed" && run;
    });
    expect(done.output!.title).toBe("analyzed 2 shard(s)");
  });

  it("reruns the failed or errored runs of the head commit on /retest", async () => {
    let attempts = 0;
    t = await startTestBot({
      github: { members: ["alice"] },
      resolvePlan: async (input) => {
        attempts += 1;
        return attempts === 1
          ? { kind: "unavailable", conclusion: "failure", reason: "registry said no" }
          : fixedResolver()(input);
      },
    });
    await t.deliver("issue_comment", commentPayload({ body: "/retest" }));
    const [nothing] = await eventually(() => t!.github.comments().length === 1 && t!.github.comments());
    expect(nothing).toContain("no failed or errored network-stress run");

    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress" }));
    await eventually(async () => (await runsOfPr())[0]?.conclusion === "failure");
    await t.deliver("issue_comment", commentPayload({ body: "/retest" }));
    const runs = await eventually(async () => {
      const r = await runsOfPr();
      return r.length === 2 && r[0]!.state === "running" && r;
    });
    expect(runs[0]!.subject.trigger.kind).toBe("retest");
  });

  it("lets a member approve an outside author's PR with /ok-to-test, which labels it and starts its runs", async () => {
    t = await startTestBot({
      github: { members: ["alice"], config: "arches: [amd64]\n", pull: { author: "newcomer" } },
    });
    await t.deliver("issue_comment", commentPayload({ body: "/ok-to-test", author: "newcomer" }));
    await eventually(() => t!.github.comments().length === 1);
    expect(t.github.writes.some((w) => w.path.endsWith("/labels"))).toBe(false);

    await t.deliver("issue_comment", commentPayload({ body: "/ok-to-test", author: "alice" }));
    const label = await eventually(() => t!.github.writes.find((w) => w.path.endsWith("/labels")));
    expect(label.body).toEqual({ labels: ["ok-to-test"] });
    const runs = await eventually(async () => {
      const r = await runsOfPr();
      return r.length === 1 && r;
    });
    expect(runs[0]!.subject.trigger).toMatchObject({ kind: "ok-to-test", actor: "alice" });
  });
});
