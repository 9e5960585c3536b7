import { z } from "zod";
import { archSchema } from "@netstress/core/arch/arch.ts";

/**
 * A pooled history baseline (`netstress analyze --history FILE`): per test, how many runs of the
 * released payload there were and how many passed cleanly. The history store writes this; the
 * report states the pool's size and age from `runs`, `from` and `to`.
 */
export const historyBaselineSchema = z
  .looseObject({
    stream: z.string().optional(),
    arch: archSchema.optional(),
    /** How many stress runs were pooled. */
    runs: z.number().int().nonnegative().optional(),
    from: z.string().optional(),
    to: z.string().optional(),
    tests: z.array(
      z.looseObject({
        name: z.string().min(1),
        runs: z.number().int().nonnegative(),
        passes: z.number().int().nonnegative(),
      }),
    ),
  })
  .superRefine((history, context) => {
    history.tests.forEach((test, index) => {
      if (test.passes > test.runs) {
        context.addIssue({ code: "custom", path: ["tests", index, "passes"], message: "passes exceed runs" });
      }
    });
  });
export type HistoryBaseline = z.infer<typeof historyBaselineSchema>;
