import { z } from "zod";
import { archSchema } from "../arch/arch.ts";
import { lifecycleSchema } from "../ote/schemas.ts";
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
  notes: z.array(z.string()),
  tests: z.array(
    z.object({
      name: z.string(),
      component: z.string(),
      lifecycle: lifecycleSchema,
      class: z.enum(VERDICT_CLASSES),
      reason: z.string(),
      pr: armCountsSchema,
      baseline: armCountsSchema,
      pValue: z.number().nullable(),
      qValue: z.number().nullable(),
      minDetectableFailureRate: z.number().nullable(),
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
    notes: inputNotes(context),
    tests: analysis.tests.map((test) => ({
      name: test.name,
      component: test.component,
      lifecycle: test.lifecycle,
      class: test.class,
      reason: test.reason,
      pr: test.pr,
      baseline: test.baseline,
      pValue: test.pValue,
      qValue: test.qValue,
      minDetectableFailureRate: test.minDetectableFailureRate,
    })),
  };
}
