import { z } from "zod";
import { decideStateSchema } from "../analysis/decide-state.ts";
import { GATE_VERDICTS } from "../analysis/gate-verdict.ts";
import type { AnalysisConclusion } from "../analysis/types.ts";
import { archSchema } from "@netstress/core/arch/arch.ts";
import { BASELINES } from "@netstress/core/model/baselines.ts";
import type { CheckRunOutput } from "../report/check-run-output.ts";
import type { RunPower } from "../analysis/run-design-power.ts";
import { executionPlanSchema } from "@netstress/core/model/execution-plan.ts";
import { armSchema } from "@netstress/core/model/result-record.ts";
import type { ProvisionProgress } from "./clusters-under-test.ts";

export const RUN_STATES = ["queued", "waiting-for-images", "running", "analyzing", "completed"] as const;
export type RunState = (typeof RUN_STATES)[number];

/** How a run can end: the analysis' conclusions and the ways a run stops without one (GitHub's names). */
export const CONCLUSIONS = [
  "success",
  "failure",
  "neutral",
  "cancelled",
  "timed_out",
  "action_required",
] as const satisfies readonly (AnalysisConclusion | string)[];
export type Conclusion = (typeof CONCLUSIONS)[number];

export const TRIGGERS = [
  "comment",
  "pull_request",
  "ok-to-test",
  "rerun",
  "more",
  "retest",
  "merge_group",
] as const;

const outputSchema = z.object({
  title: z.string(),
  summary: z.string(),
  text: z.string().optional(),
  locatedFailures: z
    .array(z.object({ test: z.string(), codeLocations: z.array(z.string()), message: z.string() }))
    .optional(),
}) satisfies z.ZodType<CheckRunOutput>;

/** Results of iterations that count toward this run: its own, and those of the run it extends (`more`). */
const resultSetSchema = z.object({
  id: z.string(),
  resultsPath: z.string(),
  first: z.number().int().nonnegative(),
  count: z.number().int().positive(),
  /** Iterations the infrastructure kept losing: not in the results. */
  lost: z.array(z.object({ iteration: z.number().int().nonnegative(), reason: z.string() })).optional(),
  /** Each arm ran in pods of its own against clusters of its own: the PR arm could not touch the baseline's. */
  armsIsolated: z.boolean().optional(),
});
export type ResultSet = z.infer<typeof resultSetSchema>;

/** A cluster under test a run's arm held: which, running what, and from when to when (cluster-hours). */
const heldClusterSchema = z.object({
  arm: armSchema,
  /** Both arms ran on it (an adaptive run's shared clusters); `arm` is then the PR arm. */
  shared: z.boolean().optional(),
  id: z.string(),
  source: z.string(),
  payload: z.string(),
  /** Crossover: its number among the run's clusters, by which a resumed run asks for it again. */
  slot: z.number().int().nonnegative().optional(),
  acquiredAt: z.string(),
  releasedAt: z.string().optional(),
});
export type HeldCluster = z.infer<typeof heldClusterSchema>;

/** Where an arm's clusters under test are while the run waits for them (see ProvisionProgress). */
const provisioningSchema = z.object({
  arm: armSchema,
  arch: archSchema,
  wanted: z.number().int().nonnegative(),
  ready: z.number().int().nonnegative(),
  phase: z.enum(["queued", "installing", "upgrading", "ready"]),
  since: z.string(),
  detail: z.string().optional(),
}) satisfies z.ZodType<ProvisionProgress>;

/**
 * The payloads of a run, each pinned to the digest its tag named when the run was resolved: what
 * its clusters install, what its plan was read from and what its history entries say. A tag is
 * resolved once; from then on only digests are compared.
 */
const runPayloadsSchema = z.object({
  /** The PR arm's: a PR run's PR payload (its images in the base payload), a gate's candidate, a periodic's payload. */
  pr: z.string().optional(),
  /** The baseline arm's: the payload as released (a PR run's configured or stream-latest one), a gate's baseline. */
  baseline: z.string().optional(),
  /** Where an upgrade run's clusters start. */
  upgradeFrom: z.string().optional(),
  /** The release-controller's name of the baseline payload, when a release stream chose it. */
  release: z.string().optional(),
  /** The release names (versions) the arms' payloads carry in their image-references, once read. */
  names: z.object({ pr: z.string(), baseline: z.string() }).optional(),
});
export type RunPayloads = z.infer<typeof runPayloadsSchema>;

/**
 * One arm's half of a crossover batch, a shard of its own on clusters of its own: the baseline
 * arm's on new clusters (numbered from `firstSlot`), the PR arm's on clusters that ran the
 * baseline arm before and are upgraded to the PR payload first (`upgrade`, by id).
 */
const batchHalfSchema = z.object({
  arm: armSchema,
  shardId: z.string(),
  first: z.number().int().nonnegative(),
  count: z.number().int().positive(),
  clusters: z.number().int().positive(),
  firstSlot: z.number().int().nonnegative().optional(),
  upgrade: z.array(z.string()).optional(),
});
export type BatchHalf = z.infer<typeof batchHalfSchema>;

/** An adaptive run's batch: a shard of iterations on the clusters held, with the tests still undecided. */
const adaptiveBatchSchema = z.object({
  shardId: z.string(),
  first: z.number().int().nonnegative(),
  count: z.number().int().positive(),
  /** The tests it runs beside the [Invariant] monitors; absent: every test (a run's first batch). */
  tests: z.array(z.string()).optional(),
  /** Shared clusters: the clusters both arms run on; crossover: every half's, new and upgraded. */
  clusters: z.number().int().positive(),
  iterationsPerCluster: z.number().int().positive(),
  /** Crossover by upgrade: its halves (first … first + count - 1 in all); absent: shared clusters, one shard. */
  halves: z.array(batchHalfSchema).optional(),
});
export type AdaptiveBatch = z.infer<typeof adaptiveBatchSchema>;

/**
 * The tests each arm's components listed in the batches read so far, monitors included: a later
 * batch's plan is cut from it (see batchPlan) without reading those batches again.
 */
const listedTestsSchema = z.array(
  z.object({ arm: armSchema, component: z.string(), tests: z.array(z.string()) }),
);
export type ListedTests = z.infer<typeof listedTestsSchema>;

/** Where one test stands after the last finished batch (see analysis/decide-batch.ts). */
const adaptiveTestSchema = z.object({
  name: z.string(),
  decision: z.enum(["regression", "clean", "undecided"]),
  reason: z.string(),
  /** The batch (1-based) after which it was decided. */
  decidedAfter: z.number().int().positive().optional(),
  executions: z.object({ pr: z.number().int().nonnegative(), baseline: z.number().int().nonnegative() }),
  clusters: z.number().int().nonnegative(),
  contrasts: z.number().int().nonnegative(),
  meanContrast: z.number().nullable(),
  /** Not a blocking test: a regression of it does not fail the run. */
  informing: z.boolean().optional(),
});
export type AdaptiveTest = z.infer<typeof adaptiveTestSchema>;

/**
 * An adaptive run's state, saved with every batch so that a resumed run goes on where it was: the
 * batches planned (the last one may not have finished) and the decision after the last finished one.
 */
const adaptiveStateSchema = z.object({
  design: z.enum(["shared clusters", "crossover by upgrade"]),
  /**
   * Crossover by upgrade: each cluster moved to the PR payload (or not: `failed` says why, and it
   * was given back), from when to when, so that the report names them and their cost.
   */
  upgrades: z
    .array(
      z.object({
        id: z.string(),
        startedAt: z.string(),
        finishedAt: z.string(),
        failed: z.string().optional(),
      }),
    )
    .optional(),
  /**
   * Crossover by upgrade: the upgrades of a batch's PR half while they happen (the batch, 1-based,
   * when they started, each cluster as far as it got), so that the check run and the gate show
   * what the run waits for. Set before they start; dropped once the batch's halves run, and when
   * the run starts again (a resumed run sets its own) or concludes.
   */
  upgrading: z
    .object({
      batch: z.number().int().positive(),
      since: z.string(),
      clusters: z.array(z.object({ id: z.string(), state: z.enum(["upgrading", "upgraded", "failed"]) })),
    })
    .optional(),
  /**
   * Crossover by upgrade: the history of the baseline payload on the run's release stream and arch,
   * read once before its first batch (see baselineHistory), up to and including that payload. Its
   * payloads stand in for the baseline arm (each against one new cluster on the PR payload); kept
   * here so that every decision of the run, resumed or not, reads the same history.
   */
  history: z
    .object({
      stream: z.string(),
      arch: z.string(),
      payloads: z.array(
        z.object({
          release: z.string(),
          payload: z.string(),
          tests: z.record(
            z.string(),
            z.object({
              executions: z.number().int().nonnegative(),
              failures: z.number().int().nonnegative(),
              flakes: z.number().int().nonnegative(),
              clusters: z.number().int().nonnegative().optional(),
            }),
          ),
        }),
      ),
    })
    .optional(),
  /** Test executions the run may spend in all (inherited batches included), once its tests are known. */
  budget: z.number().int().nonnegative().optional(),
  batches: z.array(adaptiveBatchSchema),
  decision: z
    .object({
      tests: z.array(adaptiveTestSchema),
      stopped: z.enum(["all tests decided", "budget spent"]).nullable(),
      /** Test executions spent so far, inherited batches included. */
      spent: z.number().int().nonnegative(),
      target: z.object({ from: z.number(), to: z.number() }),
      method: z.string(),
      /** What the decision step says of how it decided (the history that stood in, how contrasts were made). */
      notes: z.array(z.string()).optional(),
      /** The decision step's state after the batches so far: the next step reads only the batches since. */
      state: decideStateSchema.optional(),
      /**
       * What the next batches are planned from, kept with `state` so that no step reads a batch
       * twice: the tests listed so far, and the executions per iteration of the run's first batch
       * (what a budget of iterations is counted in). Absent from decisions saved before it was.
       */
      planning: z
        .object({ executionsPerIteration: z.number().nonnegative(), listed: listedTestsSchema })
        .optional(),
    })
    .optional(),
});
export type AdaptiveState = z.infer<typeof adaptiveStateSchema>;

/**
 * What the run's design can see, by the power planner (`analysis/run-design-power.ts`): computed
 * once by the resolve stage, shown by its check run and its gate.
 */
export const runPowerSchema = z.object({
  design: z.object({
    kind: z.enum(["separate", "shared", "crossover", "adaptive"]),
    batchesOn: z.enum(["shared", "crossover"]).optional(),
    clustersPerArm: z.number().int().positive(),
    iterationsPerCluster: z.number().int().positive(),
    tests: z.number().int().positive(),
    testsAssumed: z.boolean(),
    budgetIterations: z.number().int().positive().optional(),
    adaptiveAsFixed: z.string().optional(),
  }),
  detectable: z.array(z.object({ label: z.string(), baseRate: z.number(), rise: z.number().nullable() })),
  cost: z.object({ clusters: z.number(), clusterHours: z.number() }),
  target: z.object({ from: z.number(), to: z.number() }),
  need: z
    .object({
      clustersPerArm: z.number().int(),
      iterationsPerCluster: z.number().int(),
      clusters: z.number(),
      clusterHours: z.number(),
    })
    .nullable()
    .optional(),
  maxClustersPerArm: z.number().int(),
  simulation: z.object({ seed: z.string(), regressionsPerPoint: z.number().int() }),
}) satisfies z.ZodType<RunPower>;

/** A pull request's run: one head commit and arch, shown as one check run. */
const prSubjectSchema = z.object({
  kind: z.literal("pr"),
  installationId: z.number().int(),
  owner: z.string(),
  repo: z.string(),
  pr: z.number().int().positive(),
  headSha: z.string(),
  trigger: z.object({ kind: z.enum(TRIGGERS), actor: z.string(), deliveryId: z.string() }),
  /** Runs started by the same trigger (one per arch) share it. */
  requestId: z.string(),
  parentRunId: z.string().optional(),
  checkRunId: z.number().int().optional(),
  /**
   * The repository is private (the webhook's repository.private). Only then does the check run
   * carry infrastructure detail (hub namespaces, Secret and object names); a public one's says
   * the short reason, the detail going to the bot's logs.
   */
  privateRepository: z.boolean().optional(),
});
export type PrSubject = z.infer<typeof prSubjectSchema>;

/** One arch of a release gate: the candidate payload (the "pr" arm) against the baseline payload. */
const gateSubjectSchema = z.object({
  kind: z.literal("gate"),
  gateId: z.string(),
  payload: z.string(),
  baselinePayload: z.string(),
});
export type GateSubject = z.infer<typeof gateSubjectSchema>;

/** A release periodic's run: the newest payload of a stream on one arch, joining its history pool. */
const periodicSubjectSchema = z.object({
  kind: z.literal("periodic"),
  /** The periodic's name in the periodics configuration. */
  periodic: z.string(),
  stream: z.string(),
  /** The release-controller's name of the payload (e.g. 4.19.0-0.nightly-2026-12-01-000000). */
  release: z.string(),
  payload: z.string(),
});
export type PeriodicSubject = z.infer<typeof periodicSubjectSchema>;

export const SUBJECT_KINDS = ["pr", "gate", "periodic"] as const;
export type SubjectKind = (typeof SUBJECT_KINDS)[number];

/**
 * One stress run: one subject (what asked for it and who is told), one architecture. Stored in
 * Redis as JSON and parsed on every read; `revision` increases with every change (compare-and-set).
 */
export const runRecordSchema = z.object({
  id: z.string(),
  subject: z.discriminatedUnion("kind", [prSubjectSchema, gateSubjectSchema, periodicSubjectSchema]),
  arch: archSchema,
  options: z.object({
    iterations: z.number().int().positive(),
    baseline: z.enum(BASELINES),
    focus: z.string().optional(),
    /** Only the tests of this suite, as the binaries define it (`info`). */
    suite: z.string().optional(),
    /** [Disruptive] tests run (alone) only when asked. */
    includeDisruptive: z.boolean().optional(),
    /**
     * An upgrade run: both arms' clusters start at this release, and each arm's [Upgrade] tests
     * upgrade them to its own payload (see armPayload).
     */
    upgradeFrom: z.string().optional(),
  }),
  /** What the run is built from and its limits (fixed when it is accepted). */
  source: z.object({
    tags: z.array(z.string()),
    prImage: z.string().optional(),
    /** The repository's pr_payload template: CI's PR release payload. */
    prPayload: z.string().optional(),
    payload: z.string().optional(),
    /** The release stream whose history pool the run compares with and feeds. */
    releaseStream: z.string().optional(),
    capabilities: z.array(z.string()).optional(),
    parallel: z.number().int().positive(),
    /** Tests labelled as network tests running at once (at most `parallel`). */
    networkParallel: z.number().int().positive().optional(),
    /** Clusters under test per arm, when the bot has a cluster source (default 2). */
    clusters: z.number().int().positive().optional(),
    timeoutMinutes: z.number().int().positive(),
    imageWaitMinutes: z.number().int().nonnegative(),
    /** The repository's `target`: the rise in a test's failure probability a run must be able to see. */
    target: z.object({ from: z.number(), to: z.number() }).optional(),
    /** mode: adaptive: batches until every test is decided at the target or the budget is spent. */
    adaptive: z
      .object({
        target: z.object({ from: z.number(), to: z.number() }),
        budgetIterations: z.number().int().positive(),
      })
      .optional(),
  }),
  /** While one active run has this key, identical requests get that run. */
  dedupeKey: z.string(),
  /** This run's own iterations are firstIteration … firstIteration + iterations - 1. */
  firstIteration: z.number().int().nonnegative(),
  /** Finished result sets: inherited from the parent first, then this run's own. */
  results: z.array(resultSetSchema),
  state: z.enum(RUN_STATES),
  conclusion: z.enum(CONCLUSIONS).optional(),
  /** Why the run ended the way it did, in words for the reader. */
  reason: z.string().optional(),
  output: outputSchema.optional(),
  /** A gate's verdict for its arch, decided from the analysis. */
  decision: z.object({ verdict: z.enum(GATE_VERDICTS), reasons: z.array(z.string()) }).optional(),
  /** The history pool the run was compared with. */
  pool: z
    .object({ runs: z.number().int().nonnegative(), from: z.string().optional(), to: z.string().optional() })
    .optional(),
  plan: executionPlanSchema.optional(),
  /** What the run's design can see (from its plan; absent when the planner cannot say). */
  power: runPowerSchema.optional(),
  /** Every payload the run installs or compares, by digest, as the resolve stage found them. */
  payloads: runPayloadsSchema.optional(),
  progress: z.object({ done: z.number(), total: z.number(), failed: z.number() }).optional(),
  /** Per arm, while its clusters under test are on their way; dropped once they are all there. */
  provisioning: z.array(provisioningSchema).optional(),
  /** An adaptive run's batches and decisions. */
  adaptive: adaptiveStateSchema.optional(),
  /** Every cluster under test the run held, in the order acquired. */
  clusters: z.array(heldClusterSchema).optional(),
  imageWait: z
    .object({ since: z.string(), attempts: z.number().int(), missing: z.array(z.string()), next: z.string() })
    .optional(),
  reportPath: z.string().optional(),
  revision: z.number().int().nonnegative(),
  createdAt: z.string(),
  updatedAt: z.string(),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
});
export type RunRecord = z.infer<typeof runRecordSchema>;
export type PrRun = RunRecord & { subject: PrSubject };
export type GateRun = RunRecord & { subject: GateSubject };
export type PeriodicRun = RunRecord & { subject: PeriodicSubject };

export function isActive(run: RunRecord): boolean {
  return run.state !== "completed";
}

export function isPrRun(run: RunRecord): run is PrRun {
  return run.subject.kind === "pr";
}
