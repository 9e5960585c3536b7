import { afterEach, describe, expect, it } from "vitest";
import { planForPod } from "../../src/farm/pod-plan.ts";
import { DEFAULT_TEST_BINARY_REGISTRY } from "../../src/payload/test-binary-registry.ts";
import { eventually } from "../helpers/github-api.ts";
import { commentPayload } from "../helpers/github-payloads.ts";
import { controlledExecutor, startTestBot, type TestBot } from "../helpers/github-test-bot.ts";

let t: TestBot | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

describe("which tests a PR's run selects", () => {
  it("reaches the executor: suite= over the repository's suite, disruptive tests, network parallelism", async () => {
    const control = controlledExecutor();
    t = await startTestBot({
      github: {
        members: ["alice"],
        config:
          "suite: ovn-kubernetes/conformance/parallel\ndisruptive: true\nparallel: 4\nnetwork_parallel: 2\n",
      },
      executor: control.executor,
    });
    await t.deliver(
      "issue_comment",
      commentPayload({ body: "/test network-stress suite=openshift/conformance/parallel" }),
    );
    const [entry] = await eventually(() => control.running.size === 1 && [...control.running.values()]);
    const { input } = entry!;
    expect(input.shard.plan.selection).toEqual({
      suite: "openshift/conformance/parallel",
      includeDisruptive: true,
    });
    expect(input.shard).toMatchObject({ parallel: 4, networkParallel: 2 });
    const [run] = await t.store.listForPullRequest("openshift", "ovn-kubernetes", 7);
    expect(run!.options).toMatchObject({ suite: "openshift/conformance/parallel", includeDisruptive: true });

    // A farm pod's plan keeps the selection (its binaries are copied out of their images).
    const pod = planForPod({
      plan: {
        ...input.shard.plan,
        arms: [
          {
            arm: "pr",
            components: [
              { component: "ovn-kubernetes", binary: "/b", image: "quay.io/o/r@sha256:" + "a".repeat(64) },
            ],
          },
        ],
      },
      testBinaries: DEFAULT_TEST_BINARY_REGISTRY,
    });
    expect(pod.plan.selection).toEqual(input.shard.plan.selection);
  });
});

describe("an upgrade run asked for in a comment", () => {
  it("records upgrade-from, includes [Disruptive] tests and runs one iteration per cluster under test", async () => {
    const from = "quay.io/openshift-release-dev/ocp-release:4.18.9-x86_64";
    const control = controlledExecutor();
    t = await startTestBot({
      github: { members: ["alice"], config: "clusters: 3\n" },
      executor: control.executor,
    });
    await t.deliver(
      "issue_comment",
      commentPayload({ body: `/test network-stress upgrade-from=${from} iterations=10` }),
    );
    const [entry] = await eventually(() => control.running.size === 1 && [...control.running.values()]);
    expect(entry!.input.shard.plan.selection).toEqual({ includeDisruptive: true });
    expect(entry!.input.shard.iterations.count).toBe(3);
    const [run] = await t.store.listForPullRequest("openshift", "ovn-kubernetes", 7);
    expect(run!.options).toMatchObject({ upgradeFrom: from, includeDisruptive: true, iterations: 3 });

    // More of an upgrade run is more clusters upgraded once each, from the same release.
    await control.complete(run!.id);
    await eventually(async () => (await t!.store.get(run!.id))?.state === "completed");
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress more=8" }));
    const more = await eventually(async () => {
      const runs = await t!.store.listForPullRequest("openshift", "ovn-kubernetes", 7);
      return runs.length === 2 && control.running.has(runs[0]!.id) && runs[0]!;
    });
    expect(more.options).toMatchObject({ upgradeFrom: from, includeDisruptive: true, iterations: 3 });
    expect(control.running.get(more.id)!.input.shard.iterations).toEqual({ first: 3, count: 3 });
  });
});

describe("a farm pod's binaries", () => {
  const image = "quay.io/o/r@sha256:" + "a".repeat(64);
  it("are copied from where discovery found them in the image, and a referrer's binary is refused by name", () => {
    const pod = planForPod({
      plan: {
        arch: "amd64",
        arms: [
          {
            arm: "pr",
            components: [{ component: "etcd", binary: "/b", image, imagePath: "/usr/bin/etcd-tests-ext.gz" }],
          },
        ],
      },
      testBinaries: DEFAULT_TEST_BINARY_REGISTRY,
    });
    expect(pod.copies.map((c) => c.source)).toEqual(["/usr/bin/etcd-tests-ext.gz"]);
    expect(() =>
      planForPod({
        plan: {
          arch: "amd64",
          arms: [
            {
              arm: "pr",
              components: [{ component: "sdn", binary: "/b", image, referrer: "sha256:" + "b".repeat(64) }],
            },
          ],
        },
        testBinaries: DEFAULT_TEST_BINARY_REGISTRY,
      }),
    ).toThrow(/sdn: its binary comes from a tests-extension referrer artifact/);
  });
});
