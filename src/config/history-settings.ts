import { z } from "zod";

/** The history pool's environment. */
export const historyEnvSchema = z.looseObject({
  NETSTRESS_HISTORY_WINDOW_DAYS: z.coerce
    .number()
    .int()
    .min(1)
    .max(365)
    .default(14)
    .describe(
      "A payload no run joined for this many days leaves a stream's history (and its pooled baseline)",
    ),
  NETSTRESS_HISTORY_MAX_RUNS: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(500)
    .describe(
      "At most this many runs per stream and arch stay pooled; the payloads run longest ago leave first, whole",
    ),
  NETSTRESS_HISTORY_MAX_PAYLOADS: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(500)
    .describe(
      "At most this many payloads per stream and arch stay in the history (about a byte per test and payload in Redis)",
    ),
  NETSTRESS_QUARANTINE_FLAKY_PAYLOADS: z.coerce
    .number()
    .int()
    .min(0)
    .max(1000)
    .default(5)
    .describe(
      "A test that flaked on each of its stream's last this many payloads (on an arch) is quarantined for PRs on that stream and arch; 0 never",
    ),
});

export interface HistorySettings {
  /** A payload no run joined for this many days leaves the history. */
  windowDays: number;
  /** At most this many runs per stream and arch. */
  maxRuns: number;
  /** At most this many payloads per stream and arch. */
  maxPayloads: number;
  /** A test flaky on each of its stream's last this many payloads is quarantined (0: never). */
  flakyPayloads: number;
}

export function historySettingsFrom(e: z.infer<typeof historyEnvSchema>): HistorySettings {
  return {
    windowDays: e.NETSTRESS_HISTORY_WINDOW_DAYS,
    maxRuns: e.NETSTRESS_HISTORY_MAX_RUNS,
    maxPayloads: e.NETSTRESS_HISTORY_MAX_PAYLOADS,
    flakyPayloads: e.NETSTRESS_QUARANTINE_FLAKY_PAYLOADS,
  };
}
