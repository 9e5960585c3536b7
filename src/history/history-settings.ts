import { z } from "zod";

/** The history pool's environment. */
export const historyEnvSchema = z.looseObject({
  NETSTRESS_HISTORY_WINDOW_DAYS: z.coerce
    .number()
    .int()
    .min(1)
    .max(365)
    .default(14)
    .describe("Runs older than this many days leave a stream's history pool"),
  NETSTRESS_HISTORY_MAX_RUNS: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(500)
    .describe(
      "At most this many runs per stream and arch stay pooled (about a byte per test and run in Redis)",
    ),
});

/** The pool's window and cap; a bad value stops start-up with its name. */
export function loadHistorySettings(env: NodeJS.ProcessEnv = process.env): {
  windowDays: number;
  maxRuns: number;
} {
  const parsed = historyEnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new RangeError(
      `the history settings are invalid: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  }
  return {
    windowDays: parsed.data.NETSTRESS_HISTORY_WINDOW_DAYS,
    maxRuns: parsed.data.NETSTRESS_HISTORY_MAX_RUNS,
  };
}
