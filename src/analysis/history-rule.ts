import { fisherExactGreater } from "./fisher-exact.ts";
import { roundHalfEven } from "./round-half-even.ts";

/**
 * The job-run-aggregator rule (openshift/ci-tools) for judging a handful of attempts against a pooled
 * history: a one-sided Fisher test at α = 0.05 of the attempts against a corpus of 250 runs that pass
 * at the historical rate, relaxed by a pity factor of 2 failures, never judged below 6 attempts.
 */
export const HISTORY_RULE = { corpusSize: 250, alpha: 0.05, pityFailures: 2, minimumAttempts: 6 } as const;

export interface HistoryRuleParameters {
  corpusSize: number;
  alpha: number;
}

/**
 * Strict required passes for `attempts` attempts when history passes `historicalPassPercent`% (an
 * integer 0..100): one less than the first pass count whose deficit against the corpus is not
 * significant. The "one less" is the aggregator's own definition: its table is built that way, so a
 * count that just reaches significance is still tolerated.
 */
export function strictRequiredPasses({
  attempts,
  historicalPassPercent,
  corpusSize = HISTORY_RULE.corpusSize,
  alpha = HISTORY_RULE.alpha,
}: { attempts: number; historicalPassPercent: number } & Partial<HistoryRuleParameters>): number {
  if (!Number.isInteger(historicalPassPercent) || historicalPassPercent < 0 || historicalPassPercent > 100) {
    throw new RangeError(`historical pass percent must be an integer 0..100, got ${historicalPassPercent}`);
  }
  const corpusPasses = roundHalfEven((corpusSize * historicalPassPercent) / 100);
  const corpusFailures = corpusSize - corpusPasses;
  for (let passes = 0; passes <= attempts; passes++) {
    // Alternative "greater": the corpus passes more often than these attempts do.
    const p = fisherExactGreater({ a: corpusPasses, b: passes, c: corpusFailures, d: attempts - passes });
    if (p > alpha) return Math.max(0, passes - 1);
  }
  // Unreachable: with every attempt passing the table is at its lower extreme and p = 1.
  return attempts;
}

/** Required passes after the pity factor: never more than attempts − 2, so two failures always pass. */
export function requiredPasses({
  attempts,
  historicalPassPercent,
  pityFailures = HISTORY_RULE.pityFailures,
  ...parameters
}: {
  attempts: number;
  historicalPassPercent: number;
  pityFailures?: number;
} & Partial<HistoryRuleParameters>): number {
  const strict = strictRequiredPasses({ attempts, historicalPassPercent, ...parameters });
  return Math.min(strict, Math.max(0, attempts - pityFailures));
}

/** The whole table, rows by attempts 0..maxAttempts, columns by historical pass percent 0..100. */
export function requiredPassesTable({
  maxAttempts,
  strict = false,
}: {
  maxAttempts: number;
  strict?: boolean;
}): number[][] {
  const rule = strict ? strictRequiredPasses : requiredPasses;
  return Array.from({ length: maxAttempts + 1 }, (_, attempts) =>
    Array.from({ length: 101 }, (_, historicalPassPercent) => rule({ attempts, historicalPassPercent })),
  );
}

export type HistoryRuleOutcome =
  | { verdict: "too-few-attempts"; attempts: number; minimumAttempts: number }
  | {
      verdict: "pass" | "fail";
      attempts: number;
      passes: number;
      required: number;
      historicalPassPercent: number;
    };

/** Required passes under the default rule, by attempts and percent: every test of a run asks the same few. */
const defaultRuleCache = new Map<number, number>();

/** Judges attempts/passes against a historical pass rate (0..1). */
export function applyHistoryRule({
  attempts,
  passes,
  historicalPassRate,
}: {
  attempts: number;
  passes: number;
  historicalPassRate: number;
}): HistoryRuleOutcome {
  if (attempts < HISTORY_RULE.minimumAttempts) {
    return { verdict: "too-few-attempts", attempts, minimumAttempts: HISTORY_RULE.minimumAttempts };
  }
  // The aggregator works in whole percent, truncated.
  const historicalPassPercent = Math.min(100, Math.max(0, Math.floor(historicalPassRate * 100 + 1e-9)));
  const key = attempts * 101 + historicalPassPercent;
  let required = defaultRuleCache.get(key);
  if (required === undefined) {
    required = requiredPasses({ attempts, historicalPassPercent });
    defaultRuleCache.set(key, required);
  }
  return { verdict: passes < required ? "fail" : "pass", attempts, passes, required, historicalPassPercent };
}
