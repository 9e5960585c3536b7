// Property: no sequence of comments, labels, pushes and button presses by untrusted users starts a
// run — on one real bot (webhooks over HTTP with real signatures, Redis, GitHub faked by nock).
// And: whatever pullspec a member names in upgrade-from=, no cluster source installs an image
// outside the operator's releases.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_RELEASE_REPOSITORIES } from "../../src/config/registry-settings.ts";
import { startFakeHive } from "@netstress/testbed/sim/start-fake-hive.ts";
import { startFakeKubeApi } from "@netstress/testbed/sim/start-fake-kube-api.ts";
import { RELEASED, seedHub, writeHiveFarmConfig } from "../clusters/hive-fixture.ts";
import { eventually } from "../helpers/github-api.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import {
  checkRunPayload,
  checkSuitePayload,
  commentPayload,
  pullRequestPayload,
} from "../helpers/github-payloads.ts";
import { startTestBot, TEST_APP_ID, type TestBot } from "../helpers/github-test-bot.ts";
import type { ShardExecutor } from "../../src/runs/shard-executor.ts";

let t: TestBot;
beforeAll(async () => {
  // An opted-in repository: pushes and approvals would start runs if anything let them.
  t = await startTestBot({
    github: {
      members: ["alice"],
      config: "automatic: true\narches: [amd64, arm64]\n",
      pull: { author: "mallory" },
    },
  });
});
afterAll(async () => t.stop());

const USERS = ["mallory", "eve"];
const COMMANDS = [
  "/test network-stress",
  "/test network-stress arch=amd64,arm64 iterations=50",
  "/ok-to-test",
  "/retest",
  "/test network-stress more=10",
  "/test network-stress abort",
  "/test ?",
  "/test network-stress iterations=5\n/ok-to-test\n/test network-stress baseline=none",
];

type Event =
  | { kind: "comment"; user: string; body: string }
  | { kind: "label"; user: string }
  | { kind: "push"; user: string; sha: string }
  | { kind: "open"; user: string }
  | { kind: "button"; user: string; identifier: "more" | "rerun" | "abort" }
  | { kind: "suite"; user: string };

const user = fc.constantFrom(...USERS);
const event: fc.Arbitrary<Event> = fc.oneof(
  fc.record({ kind: fc.constant("comment" as const), user, body: fc.constantFrom(...COMMANDS) }),
  fc.record({ kind: fc.constant("label" as const), user }),
  fc.record({
    kind: fc.constant("push" as const),
    user,
    sha: fc.constantFrom("a".repeat(40), "b".repeat(40)),
  }),
  fc.record({ kind: fc.constant("open" as const), user }),
  fc.record({
    kind: fc.constant("button" as const),
    user,
    identifier: fc.constantFrom("more" as const, "rerun" as const, "abort" as const),
  }),
  fc.record({ kind: fc.constant("suite" as const), user }),
);

let delivered = 0;
let pr = 100;

describe("untrusted users", () => {
  it("start no run, whatever they do and in whatever order", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(event, { minLength: 1, maxLength: 6 }), async (events) => {
        pr += 1;
        for (const e of events) {
          const id = `property-${delivered++}`;
          const payload =
            e.kind === "comment"
              ? commentPayload({ body: e.body, author: e.user, pr })
              : e.kind === "label"
                ? pullRequestPayload({
                    action: "labeled",
                    author: "mallory",
                    sender: e.user,
                    label: "ok-to-test",
                    labels: ["ok-to-test"],
                    pr,
                  })
                : e.kind === "push"
                  ? pullRequestPayload({
                      action: "synchronize",
                      author: "mallory",
                      sender: e.user,
                      headSha: e.sha,
                      labels: ["ok-to-test"],
                      pr,
                    })
                  : e.kind === "open"
                    ? pullRequestPayload({ action: "opened", author: e.user, labels: ["ok-to-test"], pr })
                    : e.kind === "button"
                      ? checkRunPayload({
                          action: e.identifier === "rerun" ? "rerequested" : "requested_action",
                          runId: "f".repeat(32),
                          appId: TEST_APP_ID,
                          sender: e.user,
                          ...(e.identifier === "rerun" ? {} : { identifier: e.identifier }),
                        })
                      : checkSuitePayload({ appId: TEST_APP_ID, prs: [pr], sender: e.user });
          const name =
            e.kind === "comment"
              ? "issue_comment"
              : e.kind === "button"
                ? "check_run"
                : e.kind === "suite"
                  ? "check_suite"
                  : "pull_request";
          expect((await t.deliver(name, payload, id)).status).toBe(200);
        }
        await t.intakeHandled(delivered);
        expect(await t.store.listForPullRequest("openshift", "ovn-kubernetes", pr)).toEqual([]);
        expect(t.github.checkRunWrites()).toEqual([]);
      }),
      { numRuns: 25, seed: 20261201 },
    );
  }, 120_000);
});

/** Pullspecs as a commenter might write them: release repositories and others, tags and digests, hosts of every kind. */
const pullspec = fc
  .record({
    host: fc.constantFrom(
      "quay.io",
      "registry.ci.openshift.org",
      "quay.io.evil.example",
      "169.254.169.254",
      "127.0.0.1:5000",
      "QUAY.IO",
    ),
    repository: fc.constantFrom(
      "openshift-release-dev/ocp-release",
      "ocp/release",
      "mallory/ocp-release",
      "openshift-release-dev/ocp-release/x",
      "openshift-release-dev/ocp-release-nightly",
    ),
    reference: fc.oneof(
      fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,20}$/).map((tag) => `:${tag}`),
      fc.stringMatching(/^[a-f0-9]{64}$/).map((hex) => `@sha256:${hex}`),
    ),
  })
  .map(({ host, repository, reference }) => `${host}/${repository}${reference}`);

/** An image the operator allows clusters to install: the payload it configured, or a release repository's. */
const allowedImage = (image: string) =>
  image === RELEASED ||
  DEFAULT_RELEASE_REPOSITORIES.some((r) => image.startsWith(`${r}@`) || image.startsWith(`${r}:`));

describe("upgrade-from= of any pullspec, from a member", () => {
  it("never has a cluster source asked for an image outside the allowed releases", async () => {
    const hive = await startFakeHive({ installMs: 50 });
    seedHub(hive);
    const farmApi = await startFakeKubeApi();
    const dir = await tempDir("netstress-upgrade-from-property-");
    const asked: string[] = [];
    hive.hub.store.subscribe((event) => {
      const spec = event.object.spec as { releaseImage?: string } | undefined;
      if (event.resource === "clusterimagesets" && spec?.releaseImage) asked.push(spec.releaseImage);
    });
    const configPath = join(dir.path, "farm.yaml");
    await writeHiveFarmConfig({
      path: configPath,
      farmKubeconfig: farmApi.kubeconfigPath,
      hubKubeconfig: hive.hub.kubeconfigPath,
      readySeconds: 60,
    });
    // Shards finish at once: what matters is what the clusters were asked to run.
    const executor: ShardExecutor = {
      name: "test",
      arches: async () => ["amd64"],
      execute: async (input) => {
        await mkdir(input.outDir, { recursive: true });
        const resultsPath = join(input.outDir, "results.jsonl");
        await writeFile(resultsPath, "");
        return { status: "completed", resultsPath, records: 0 };
      },
    };
    const bot = await startTestBot({
      github: { members: ["alice"], config: "clusters: 1\narches: [amd64]\n" },
      executor,
      farm: { configPath, clusterTiming: { pollMs: 50 } },
      // Plans at once; a pullspec already by digest is its own pin (the real resolver reads it).
      resolvePlan: async ({ run }) => ({
        kind: "ready",
        plan: {
          arch: run.arch,
          arms: [{ arm: "pr", components: [{ component: "x", binary: "/nonexistent" }] }],
        },
        ...(run.options.upgradeFrom?.includes("@sha256:")
          ? { payloads: { upgradeFrom: run.options.upgradeFrom } }
          : {}),
      }),
      settings: { defaults: { payload: RELEASED, tags: [] } },
    });
    try {
      let handled = 0;
      await fc.assert(
        fc.asyncProperty(pullspec, async (image) => {
          pr += 1;
          await bot.deliver(
            "issue_comment",
            commentPayload({ body: `/test network-stress upgrade-from=${image}`, pr }),
            `upgrade-from-${pr}`,
          );
          await bot.intakeHandled(++handled);
          await eventually(async () => {
            const runs = await bot.store.listForPullRequest("openshift", "ovn-kubernetes", pr);
            return runs.every((run) => run.state === "completed");
          }, 60_000);
          expect(asked.filter((image) => !allowedImage(image))).toEqual([]);
        }),
        { numRuns: 20, seed: 20261202 },
      );
      // The property saw allowed releases reach the hub, not only refusals.
      expect(asked.some((image) => image !== RELEASED)).toBe(true);
    } finally {
      await bot.stop();
      await Promise.all([hive.stop(), farmApi.stop()]);
      await dir.remove();
    }
  }, 180_000);
});
