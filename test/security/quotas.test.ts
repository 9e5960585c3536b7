// Item: no quotas. One comment of ten lines by an approved outsider started 40 runs × 50 iterations
// × 2 arms. Duplicate commands now count once, arch= takes only the repository's arches, and active
// runs per PR, repository and installation, and the size of one request, are capped.
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_QUOTAS } from "../../src/config/bot-settings.ts";
import { quotaProblem } from "../../src/app/quota-problem.ts";
import { runRecord } from "../helpers/github-run-deps.ts";
import { commentPayload } from "../helpers/github-payloads.ts";
import { controlledExecutor, startTestBot, type TestBot } from "../helpers/github-test-bot.ts";

let t: TestBot | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const runsOfPr = () => t!.store.listForPullRequest("openshift", "ovn-kubernetes", 7);

describe("quotas on comments", () => {
  it("count ten identical lines once, and refuse arches the repository is not configured for", async () => {
    const control = controlledExecutor();
    t = await startTestBot({
      github: { members: ["alice"], config: "arches: [amd64, arm64]\n" },
      executor: control.executor,
    });
    const body = Array(10).fill("/test network-stress arch=amd64,arm64 iterations=5").join("\n");
    await t.deliver("issue_comment", commentPayload({ body }), "ten-lines");
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress arch=s390x" }), "s390x");
    await t.intakeHandled(2);
    expect((await runsOfPr()).map((r) => r.arch).sort()).toEqual(["amd64", "arm64"]);
    const replies = t.github.comments();
    expect(replies.some((c) => c.includes("already running"))).toBe(false);
    expect(replies.join("\n")).toMatch(/s390x/);
  });

  it("refuse runs past the PR's quota and requests that are too large, saying what runs", async () => {
    const control = controlledExecutor();
    t = await startTestBot({
      github: { members: ["alice"], config: "arches: [amd64]\n" },
      executor: control.executor,
      settings: { quotas: { ...DEFAULT_QUOTAS, activeRunsPerPullRequest: 2, requestIterations: 40 } },
    });
    // One after the other: the intake handles comments concurrently, and "past the quota" is the third.
    for (const [i, iterations] of [3, 4, 5].entries()) {
      await t.deliver(
        "issue_comment",
        commentPayload({ body: `/test network-stress iterations=${iterations}` }),
        `q-${i}`,
      );
      await t.intakeHandled(i + 1);
    }
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress iterations=41" }), "big");
    await t.intakeHandled(4);
    expect((await runsOfPr()).map((r) => r.options.iterations).sort()).toEqual([3, 4]);
    const replies = t.github.comments().join("\n");
    expect(replies).toContain(
      "`/test network-stress iterations=5` did not start: this pull request has 2 active run(s), at most 2",
    );
    expect(replies).toContain("Retry when one of them finishes");
    expect(replies).toContain("at most 40 per request");
  });
});

describe("clusters under test per PR and per repository", () => {
  it("refuse a run whose clusters would take the PR or the repository past the operator's cap, saying which setting", async () => {
    const control = controlledExecutor();
    t = await startTestBot({
      github: { members: ["alice"], config: "arches: [amd64]\nclusters: 2\n" },
      executor: control.executor,
      settings: { quotas: { ...DEFAULT_QUOTAS, clustersPerPullRequest: 5, clustersPerRepository: 20 } },
    });
    // A new run compares against the payload: 2 arms × 2 clusters. The running one's plan (this
    // test bot's resolver) has its PR arm only: 2 clusters.
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress iterations=3" }), "c-1");
    await t.intakeHandled(1);
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress iterations=4" }), "c-2");
    await t.intakeHandled(2);
    expect((await runsOfPr()).map((r) => r.options.iterations)).toEqual([3]);
    expect(t.github.comments().join("\n")).toContain(
      "`/test network-stress iterations=4` did not start: this pull request would hold 6 clusters under test at once (4 for this request, 2 for its active runs), at most 5 (NETSTRESS_MAX_CLUSTERS_PER_PR)",
    );
  });
});

describe("a repository's own cap", () => {
  it("lowers the bot's cap on one request's size, never raises it", async () => {
    t = await startTestBot({
      github: {
        members: ["alice"],
        config: "arches: [amd64, arm64]\nlimits: { max_run_size: 30 }\n",
      },
      settings: { quotas: { ...DEFAULT_QUOTAS, requestIterations: 60 } },
    });
    await t.deliver(
      "issue_comment",
      commentPayload({ body: "/test network-stress arch=amd64,arm64 iterations=20" }),
      "a",
    );
    await t.deliver(
      "issue_comment",
      commentPayload({ body: "/test network-stress arch=amd64 iterations=20" }),
      "b",
    );
    await t.intakeHandled(2);
    expect((await runsOfPr()).map((r) => r.arch)).toEqual(["amd64"]);
    expect(t.github.comments().join("\n")).toContain("= 40; at most 30 per request");
  });
});

describe("quotaProblem", () => {
  const target = { installationId: 1, owner: "openshift", repo: "ovn-kubernetes", pr: 7 };
  const active = (n: number, subject: Partial<ReturnType<typeof runRecord>["subject"]>) =>
    Array.from({ length: n }, () =>
      runRecord({ state: "running", subject: { installationId: 1, ...subject } }),
    );
  const check = (runs: ReturnType<typeof runRecord>[]) =>
    quotaProblem({
      quotas: {
        ...DEFAULT_QUOTAS,
        activeRunsPerPullRequest: 3,
        activeRunsPerRepository: 5,
        activeRunsPerInstallation: 8,
      },
      active: runs,
      target,
      newRuns: 1,
      iterations: 10,
      clusters: 1,
      publicUrl: "https://bot",
    });

  it("counts a PR's, a repository's and an installation's active runs, each against its own cap", () => {
    expect(check(active(2, { pr: 7 }))).toBeUndefined();
    expect(check(active(3, { pr: 7 }))).toMatch(/^this pull request has 3 active run/);
    expect(check(active(5, { pr: 8 }))).toMatch(/^openshift\/ovn-kubernetes has 5 active run/);
    expect(check(active(8, { repo: "sdn" }))).toMatch(/^this installation has 8 active run/);
    // Another installation's runs are not this one's.
    expect(check(active(20, { installationId: 2, repo: "sdn" }))).toBeUndefined();
  });
});
