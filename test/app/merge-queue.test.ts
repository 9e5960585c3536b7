import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../helpers/github-api.ts";
import { mergeGroupPayload } from "../helpers/github-payloads.ts";
import { controlledExecutor, startTestBot, type TestBot } from "../helpers/github-test-bot.ts";

let t: TestBot | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const GROUP_SHA = "e".repeat(40);

describe("merge queues", () => {
  it("answers each check on the merge group's commit with success by default, saying the PRs were tested", async () => {
    t = await startTestBot({ github: { members: ["alice"], config: "arches: [amd64, arm64]\n" } });
    const response = await t.deliver("merge_group", mergeGroupPayload({ pr: 104, headSha: GROUP_SHA }));
    expect(response.status).toBe(200);
    const checks = await eventually(() => {
      const created = t!.github.checkRunWrites().filter((w) => w.method === "POST");
      return created.length === 2 && created.map((w) => w.body);
    });
    expect(checks.map((c) => c.name).sort()).toEqual(["network-stress (amd64)", "network-stress (arm64)"]);
    for (const check of checks) {
      expect(check).toMatchObject({
        head_sha: GROUP_SHA,
        status: "completed",
        conclusion: "success",
        output: { title: "Not run in the merge queue: the pull requests were stress-tested" },
      });
      expect((check.output as { summary: string }).summary).toContain("`merge_queue: skip`");
    }
    expect(await t.store.listForPullRequest("openshift", "ovn-kubernetes", 104)).toEqual([]);
  });

  it("runs the merge group's commit with merge_queue: run and concludes its check there", async () => {
    const control = controlledExecutor(["amd64"]);
    t = await startTestBot({
      github: { members: ["alice"], config: "automatic: false\narches: [amd64]\nmerge_queue: run\n" },
      executor: control.executor,
    });
    await t.deliver("merge_group", mergeGroupPayload({ pr: 104, headSha: GROUP_SHA }));
    const run = await eventually(async () => {
      const [found] = await t!.store.listForPullRequest("openshift", "ovn-kubernetes", 104);
      return found && control.running.has(found.id) && found;
    });
    expect(run.subject).toMatchObject({
      headSha: GROUP_SHA,
      trigger: { kind: "merge_group", actor: "alice" },
    });
    await control.complete(run.id);
    const check = await eventually(() =>
      [...t!.github.latestCheckRuns().values()].find((c) => c.status === "completed"),
    );
    expect(check).toMatchObject({
      name: "network-stress (amd64)",
      head_sha: GROUP_SHA,
      external_id: run.id,
      conclusion: "success",
    });
  });
});
