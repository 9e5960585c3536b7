import { z } from "zod";
import { archSchema } from "@netstress/core/arch/arch.ts";
import { lifecycleSchema } from "@netstress/core/model/ote-result-fields.ts";
import { failedIterations } from "../analysis/failed-iterations.ts";
import { DISRUPTION_VERDICTS } from "../analysis/disruption-types.ts";
import { VERDICT_CLASSES } from "../analysis/types.ts";
import { inputNotes, type ReportContext } from "./report-context.ts";
import { checkRunTitle } from "./check-run-output.ts";

const armCountsSchema = z.object({
  runs: z.number().int().nonnegative(),
  passes: z.number().int().nonnegative(),
  failures: z.number().int().nonnegative(),
  flakes: z.number().int().nonnegative(),
  skips: z.number().int().nonnegative(),
});

const clusterCountSchema = z.object({
  cluster: z.string(),
  runs: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
});

const disruptionArmSchema = z.object({
  samples: z.number().int().nonnegative(),
  clusters: z.number().int().nonnegative(),
  p50: z.number().nullable(),
  p99: z.number().nullable(),
  /** P99 of fewer than 100 samples is their largest. */
  p99IsMax: z.boolean(),
  mean: z.number().nullable(),
  max: z.number().nullable(),
  overBudget: z.number().int().nonnegative(),
  intervals: z.number().int().nonnegative(),
  budgetSeconds: z.number().nullable(),
});

/** Disruption per test × path × connection (see docs/analysis.md, "Disruption"); absent when no test reported any. */
const disruptionSummarySchema = z.object({
  unit: z.enum(["cluster", "iteration"]),
  method: z.string(),
  familySize: z.number().int().nonnegative(),
  settings: z.object({ q: z.number(), minimumSamples: z.number(), minimumShiftSeconds: z.number() }),
  counts: z.record(z.enum(DISRUPTION_VERDICTS), z.number().int().nonnegative()),
  rows: z.array(
    z.object({
      test: z.string(),
      component: z.string(),
      lifecycle: lifecycleSchema,
      path: z.string(),
      connection: z.enum(["new", "reused"]),
      verdict: z.enum(DISRUPTION_VERDICTS),
      reason: z.string(),
      pr: disruptionArmSchema,
      baseline: disruptionArmSchema,
      pValue: z.number().nullable(),
      qValue: z.number().nullable(),
      minDetectableShiftSeconds: z.number().nullable(),
    }),
  ),
});

/**
 * summary.json, the machine-readable verdict other stages (the bot, the gate) consume. The contract
 * is the fields listed in the analysis issue; the rest (title, notes, baselineKind) is extra.
 * Counts are iterations: runs = passes + failures + flakes.
 */
export const analysisSummarySchema = z.object({
  conclusion: z.enum(["success", "neutral", "failure"]),
  conclusionReason: z.string(),
  title: z.string(),
  arch: archSchema.nullable(),
  iterations: z.number().int().nonnegative(),
  baselineIterations: z.number().int().nonnegative(),
  baselineKind: z.enum(["arm", "history", "arm+history"]),
  /** Which regression rule ran: "cluster" (iterations grouped by cluster) or "iteration" (independent draws). */
  rule: z.enum(["cluster", "iteration"]),
  ruleNote: z.string(),
  /** With the cluster rule: clusters per arm, each cluster's failures across tests, the dispersion. */
  clusters: z
    .object({
      counts: z.object({ pr: z.number().int().nonnegative(), baseline: z.number().int().nonnegative() }),
      onePerArm: z.boolean(),
      typicalDispersion: z.number(),
      /** Empirical-Bayes prior of the dispersion; df null means every test shares phi. */
      prior: z.object({ phi: z.number(), df: z.number().nullable() }).nullable(),
      weather: z.array(
        z.object({
          arm: z.enum(["pr", "baseline"]),
          cluster: z.string(),
          iterations: z.number().int().nonnegative(),
          failed: z.number().int().nonnegative(),
          expected: z.number(),
          ratio: z.number(),
          bad: z.boolean(),
        }),
      ),
    })
    .optional(),
  notes: z.array(z.string()),
  disruption: disruptionSummarySchema.optional(),
  tests: z.array(
    z.object({
      name: z.string(),
      component: z.string(),
      lifecycle: lifecycleSchema,
      quarantine: z.object({ reason: z.string(), since: z.string() }).optional(),
      class: z.enum(VERDICT_CLASSES),
      reason: z.string(),
      pr: armCountsSchema,
      baseline: armCountsSchema,
      pValue: z.number().nullable(),
      qValue: z.number().nullable(),
      minDetectableFailureRate: z.number().nullable(),
      /** Per-cluster counts, for a test that failed somewhere under the cluster rule. */
      clusters: z
        .object({
          pr: z.array(clusterCountSchema),
          baseline: z.array(clusterCountSchema),
          dispersion: z.number(),
          dominant: z
            .object({
              arm: z.enum(["pr", "baseline"]),
              cluster: z.string(),
              failed: z.number().int(),
              of: z.number().int(),
            })
            .optional(),
        })
        .optional(),
    }),
  ),
});
export type AnalysisSummary = z.infer<typeof analysisSummarySchema>;

export function buildSummaryJson(context: ReportContext): AnalysisSummary {
  const { analysis } = context;
  return {
    conclusion: analysis.conclusion,
    conclusionReason: analysis.conclusionReason,
    title: checkRunTitle(analysis),
    arch: analysis.arch,
    iterations: analysis.iterations.pr,
    baselineIterations: analysis.iterations.baseline,
    baselineKind: analysis.baselineKind,
    rule: analysis.rule,
    ruleNote: analysis.ruleNote,
    ...(analysis.clusters
      ? {
          clusters: {
            ...analysis.clusters,
            prior: analysis.clusters.prior && {
              phi: analysis.clusters.prior.phi,
              df: Number.isFinite(analysis.clusters.prior.df) ? analysis.clusters.prior.df : null,
            },
          },
        }
      : {}),
    notes: inputNotes(context),
    ...(analysis.disruption
      ? {
          disruption: {
            unit: analysis.disruption.unit,
            method: analysis.disruption.method,
            familySize: analysis.disruption.familySize,
            settings: analysis.disruption.settings,
            counts: analysis.disruption.counts,
            rows: analysis.disruption.rows,
          },
        }
      : {}),
    tests: analysis.tests.map((test) => ({
      name: test.name,
      component: test.component,
      lifecycle: test.lifecycle,
      ...(test.quarantine ? { quarantine: test.quarantine } : {}),
      class: test.class,
      reason: test.reason,
      pr: test.pr,
      baseline: test.baseline,
      pValue: test.pValue,
      qValue: test.qValue,
      minDetectableFailureRate: test.minDetectableFailureRate,
      ...(test.clusters && failedIterations(test.pr) + failedIterations(test.baseline) > 0
        ? {
            clusters: {
              pr: test.clusters.pr,
              baseline: test.clusters.baseline,
              dispersion: test.clusters.dispersion,
              ...(test.clusters.dominant ? { dominant: test.clusters.dominant } : {}),
            },
          }
        : {}),
    })),
  };
}
