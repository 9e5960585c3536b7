import { z } from "zod";
import { clusterCountSchema, DEFAULT_CLUSTERS_PER_ARM } from "./cluster-count.ts";
import { archSchema } from "@netstress/core/arch/arch.ts";
import { PULLSPEC_MAX_LENGTH, RELEASE_PULLSPEC, SUITE_MAX_LENGTH, SUITE_NAME } from "../commands/command.ts";
import { BASELINES } from "@netstress/core/model/baselines.ts";
import { BUDGET_PATTERN, parseBudget } from "./parse-budget.ts";
import { DEFAULT_TARGET, TARGET_PATTERN } from "./parse-target.ts";
import { capabilitySchema } from "./capability.ts";
import { compileChangedPathPattern } from "./changed-path-pattern.ts";

export const REPO_CONFIG_PATH = ".github/network-stress.yml";

/** Placeholders of the `pr_image` template. */
export const IMAGE_PLACEHOLDERS: readonly string[] = ["org", "repo", "pr", "sha", "tag"];
/** Placeholders of the `pr_payload` template: one payload holds every tag, so no {tag}. */
export const PAYLOAD_PLACEHOLDERS: readonly string[] = ["org", "repo", "pr", "sha"];

const placeholdersAmong = (allowed: readonly string[]) =>
  [
    (t: string) => [...t.matchAll(/\{(\w*)\}/g)].every((m) => allowed.includes(m[1]!)),
    `the placeholders are ${allowed.map((p) => `{${p}}`).join(" ")}`,
  ] as const;

const tagSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "a payload tag name: letters, digits, '.', '_' and '-'");

/**
 * `.github/network-stress.yml`, read from the repository's default branch (never from the PR, so
 * a PR cannot change how it is tested). Unknown keys are errors: a typo must not silently fall back
 * to a default. Keys are snake_case like other repository automation files.
 */
export const repoConfigSchema = z
  .strictObject({
    automatic: z
      .boolean()
      .default(true)
      .describe("Run on pull_request opened, reopened, synchronize and ready_for_review."),
    drafts: z.boolean().default(false).describe("Also run automatically while a PR is a draft."),
    tags: z
      .array(tagSchema)
      .default([])
      .describe("Payload tags whose images this repository's PRs build (e.g. ovn-kubernetes)."),
    pr_image: z
      .string()
      .min(1)
      .regex(/\{tag\}/, "must contain {tag}")
      .refine(...placeholdersAmong(IMAGE_PLACEHOLDERS))
      .optional()
      .describe("Where CI publishes a PR's image for a tag; placeholders {org} {repo} {pr} {sha} {tag}."),
    pr_payload: z
      .string()
      .min(1)
      .refine(...placeholdersAmong(PAYLOAD_PLACEHOLDERS))
      .optional()
      .describe(
        "Where CI publishes the PR's release payload (the release with the PR's images); placeholders {org} {repo} {pr} {sha}. Used once its image-references point the tags at the PR's images; without it the bot assembles the payload.",
      ),
    payload: z.string().min(1).optional().describe("Release payload pullspec the PR is compared against."),
    release_stream: z
      .string()
      .min(1)
      .optional()
      .describe("Release stream whose latest payload is used (instead of payload)."),
    arches: z
      .array(archSchema)
      .min(1)
      .default(["amd64"])
      .describe("Architectures to run, one check run each."),
    iterations: z
      .int()
      .min(1)
      .max(1000)
      .default(10)
      .describe("Iterations per arm when a command does not say."),
    baseline: z.enum(BASELINES).default("payload").describe("What the PR arm is compared against."),
    focus: z.string().min(1).max(200).optional().describe("Only tests whose name contains this text."),
    suite: z
      .string()
      .max(SUITE_MAX_LENGTH)
      .regex(SUITE_NAME, "a suite name: letters, digits, '.', '_', '-' and '/'")
      .optional()
      .describe(
        "Only tests of this suite, as the test binaries define it in `info` (e.g. openshift/conformance/parallel).",
      ),
    disruptive: z
      .boolean()
      .default(false)
      .describe("Also run [Disruptive] tests (each alone on the cluster); they never run otherwise."),
    upgrade_from: z
      .string()
      .max(PULLSPEC_MAX_LENGTH)
      .regex(RELEASE_PULLSPEC, "a release image pullspec with a tag or a sha256 digest")
      .optional()
      .describe(
        "Upgrade runs: both arms' clusters start at this release and their [Upgrade] tests upgrade them to the PR payload and to the released one ([Disruptive] tests included, one iteration per cluster under test).",
      ),
    approve_pushes: z
      .enum(["once", "every"])
      .default("every")
      .describe(
        "Whether an outside author's /ok-to-test covers later pushes (once) or each push needs approving again (every).",
      ),
    run_if_changed: z
      .string()
      .max(1000)
      .refine(
        isPattern,
        "must be a valid regular expression, in RE2 syntax (no backreferences or lookaround)",
      )
      .optional()
      .describe(
        "Automatic runs only when a changed file's path matches this regular expression (RE2 syntax: matched in linear time).",
      ),
    limits: z
      .strictObject({
        max_iterations: z.int().min(1).max(1000).default(50),
        max_more: z.int().min(1).max(1000).default(50),
        max_run_size: z
          .int()
          .min(1)
          .max(100_000)
          .optional()
          .describe(
            "Iterations × arches × clusters one request may ask for; the bot's own cap (NETSTRESS_MAX_REQUEST_ITERATIONS) applies when lower.",
          ),
      })
      .default({ max_iterations: 50, max_more: 50 })
      .describe("What comment commands may ask for."),
    capabilities: z
      .array(capabilitySchema)
      .max(16)
      .default([])
      .describe(
        "Build-farm capabilities every shard needs beyond its arch (e.g. ipv6); only farm clusters offering all of them take it.",
      ),
    parallel: z.int().min(1).max(256).default(4).describe("Tests running at once in one shard."),
    clusters: clusterCountSchema.default(DEFAULT_CLUSTERS_PER_ARM),
    network_parallel: z
      .int()
      .min(1)
      .max(256)
      .optional()
      .describe(
        "[sig-network] tests running at once in one shard (default: parallel; openshift-tests uses half).",
      ),
    timeout_minutes: z
      .int()
      .min(1)
      .max(24 * 60)
      .default(180)
      .describe("A run taking longer ends timed_out."),
    merge_queue: z
      .enum(["skip", "run"])
      .default("skip")
      .describe(
        "What a merge queue's merge group gets: skip (a successful check saying the runs happened on the pull requests) or run (a run of the merge group's commit, which concludes the check).",
      ),
    mode: z
      .enum(["fixed", "adaptive"])
      .default("fixed")
      .describe(
        "fixed: every test runs the run's iterations. adaptive: the run goes in batches and, after each, runs again only the tests not decided yet (regression, or clean at the target), until all are decided or the budget is spent.",
      ),
    target: z
      .string()
      .regex(TARGET_PATTERN, "write the target as P0:P1, two failure probabilities, e.g. 0.02:0.10")
      .refine((text) => {
        const [from, to] = text.split(":").map(Number) as [number, number];
        return from < to && to <= 1;
      }, "the target's P0 must be below its P1, both between 0 and 1 (e.g. 0.02:0.10)")
      .default(DEFAULT_TARGET)
      .describe(
        "The rise in a test's failure probability a run must be able to see, as P0:P1 (0.02:0.10 is from 2% to 10%).",
      ),
    budget: z
      .string()
      .regex(
        BUDGET_PATTERN,
        "write the budget as '<N> iterations' (e.g. '30 iterations'): an adaptive run executes at most as many tests as a fixed run of N iterations per arm",
      )
      .optional()
      .describe(
        "mode: adaptive only, as '<N> iterations': the run executes at most as many tests as a fixed run of N iterations per arm would, and stops there if tests are still undecided.",
      ),
    image_wait_minutes: z
      .int()
      .min(0)
      .max(24 * 60)
      .default(120)
      .describe("How long to wait for the PR's images to be published before giving up."),
  })
  .refine((c) => !(c.payload && c.release_stream), {
    message: "give payload or release_stream, not both",
    path: ["release_stream"],
  })
  .refine((c) => c.iterations <= c.limits.max_iterations, {
    message: "iterations exceeds limits.max_iterations",
    path: ["iterations"],
  })
  .refine((c) => c.mode !== "adaptive" || c.budget !== undefined, {
    message: "mode: adaptive needs a budget, e.g. budget: 30 iterations",
    path: ["budget"],
  })
  .refine((c) => c.budget === undefined || c.mode === "adaptive", {
    message: "budget applies to mode: adaptive only; remove it or set mode: adaptive",
    path: ["budget"],
  })
  .refine((c) => c.budget === undefined || parseBudget(c.budget) <= c.limits.max_iterations, {
    message: "the budget's iterations exceed limits.max_iterations",
    path: ["budget"],
  })
  .refine((c) => c.network_parallel === undefined || c.network_parallel <= c.parallel, {
    message: "network_parallel exceeds parallel",
    path: ["network_parallel"],
  });
export type RepoConfig = z.infer<typeof repoConfigSchema>;

/** What applies to a repository without a configuration file: commands only, no automatic runs. */
export const DEFAULT_REPO_CONFIG: RepoConfig = repoConfigSchema.parse({ automatic: false });

function isPattern(source: string): boolean {
  try {
    compileChangedPathPattern(source);
    return true;
  } catch {
    return false;
  }
}
