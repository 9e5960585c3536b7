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

export interface HistorySettings {
  /** Runs older than this many days leave the pool. */
  windowDays: number;
  /** At most this many runs per stream and arch. */
  maxRuns: number;
}

export function historySettingsFrom(e: z.infer<typeof historyEnvSchema>): HistorySettings {
  return { windowDays: e.NETSTRESS_HISTORY_WINDOW_DAYS, maxRuns: e.NETSTRESS_HISTORY_MAX_RUNS };
}
