/**
 * What a run's results are compared with: another payload's run (the baseline arm), the stream's
 * history, or nothing. A command asks for one, a run record keeps it.
 */
export const BASELINES = ["payload", "history", "none"] as const;
export type Baseline = (typeof BASELINES)[number];
