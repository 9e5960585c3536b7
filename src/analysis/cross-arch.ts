import type { Arch } from "@netstress/core/arch/arch.ts";
import { benjaminiHochberg } from "./benjamini-hochberg.ts";
import { clusterExactTest } from "./cluster-exact-test.ts";
import { failedIterations } from "./failed-iterations.ts";
import type { PayloadCounts } from "./payload-counts.ts";
import type { StretchCounts } from "./first-bad-payload.ts";

/** A test that failed significantly more often on one arch than on the others, on one payload. */
export interface CrossArchDifference {
  test: string;
  /** The arch it failed more often on. */
  arch: Arch;
  counts: StretchCounts;
  /** The other arches' counts, summed. */
  others: StretchCounts;
  pValue: number;
  /** Benjamini–Hochberg q-value over every test and arch that could differ. */
  qValue: number;
  /** The correlation of iterations within one payload's run that the test allowed for. */
  rho: number;
}

export interface CrossArchResult {
  payload: string;
  /** Arches that ran the payload and have enough history to judge it. */
  arches: Arch[];
  findings: CrossArchDifference[];
  familySize: number;
  /** Why no arch was compared, when none was. */
  notJudged?: string;
}

export interface CrossArchSettings {
  q: number;
  /** Payloads besides this one an arch needs in its history to say how much payloads differ anyway. */
  minimumHistory: number;
  /** Guards: failed iterations on the worse arch, and a failure-rate difference of more than this. */
  minimumFailures: number;
  minimumDifference: number;
}

export const DEFAULT_CROSS_ARCH_SETTINGS: CrossArchSettings = {
  q: 0.05,
  minimumHistory: 5,
  minimumFailures: 3,
  minimumDifference: 0.05,
};

/** Failure-rate strata of the correlation estimate (cluster weather moves a flaky test's rate more). */
const STRATA = [0.01, 0.03, 0.1, 0.3, 1];
const stratumOf = (rate: number) => STRATA.findIndex((upper) => rate < upper || upper === 1);
/** Tests a stratum needs to be estimated on its own; fewer borrow the estimate over all tests. */
const MINIMUM_STRATUM_TESTS = 20;

/**
 * How much one payload's run varies beyond binomial, per failure-rate stratum: with payload i's
 * iterations correlated by ρ, Pearson's X² of a test's payload counts around its mean rate has
 * expectation Σ(1 + (nᵢ − 1)ρ) − 1, so ρ = Σ(X² − (k − 1)) / Σ(nᵢ − 1) over the tests of the
 * stratum (method of moments, at least 0; McCullagh & Nelder 1989, §4.5; Williams 1982).
 */
function payloadCorrelation(histories: readonly (readonly PayloadCounts[])[]): (rate: number) => number {
  const excess = new Float64Array(STRATA.length);
  const weight = new Float64Array(STRATA.length);
  const tests = new Float64Array(STRATA.length);
  for (const history of histories) {
    const names = new Set(history.flatMap((payload) => Object.keys(payload.tests)));
    for (const name of names) {
      const counts = history.flatMap((payload) => {
        const test = payload.tests[name];
        return test && test.executions > 0 ? [{ n: test.executions, y: failedIterations(test) }] : [];
      });
      if (counts.length < 2) continue;
      const executions = counts.reduce((sum, { n }) => sum + n, 0);
      const p = counts.reduce((sum, { y }) => sum + y, 0) / executions;
      if (p <= 0 || p >= 1) continue;
      const pearson = counts.reduce((sum, { n, y }) => sum + (y - n * p) ** 2 / (n * p * (1 - p)), 0);
      const stratum = stratumOf(p);
      excess[stratum]! += pearson - (counts.length - 1);
      weight[stratum]! += counts.reduce((sum, { n }) => sum + n - 1, 0);
      tests[stratum]! += 1;
    }
  }
  const overall = Math.max(
    0,
    excess.reduce((a, b) => a + b, 0) /
      Math.max(
        1,
        weight.reduce((a, b) => a + b, 0),
      ),
  );
  const rho = STRATA.map((_, s) =>
    tests[s]! >= MINIMUM_STRATUM_TESTS ? Math.max(0, excess[s]! / weight[s]!) : overall,
  );
  // A correlation of 1 would make a whole run one draw; keep it a probability below 1.
  return (rate) => Math.min(0.95, rho[stratumOf(rate)]!);
}

/**
 * Tests that failed significantly more often on one arch than on the others on the same payload
 * (pure). Per test and arch, a one-sided exact test of that arch's failed iterations against the
 * other arches' given their sum (Fisher's conditioning), each arch's total beta-binomial with the
 * correlation ρ its payload runs show in their history (payloadCorrelation): each arch runs on
 * clusters of its own, and a bad cluster on one arch must not read as an arch difference. At ρ = 0
 * this is the one-sided Fisher exact test. The family is every test and arch whose smallest
 * achievable p-value is at most q (Tarone 1990), with Benjamini–Hochberg at q over it; a finding
 * also needs at least 3 failed iterations on its arch and a rate more than 5 points above the
 * others'. Arches with fewer than `minimumHistory` other payloads are not judged.
 */
export function crossArchDifferences(input: {
  payload: string;
  histories: readonly { arch: Arch; history: readonly PayloadCounts[] }[];
  settings?: Partial<CrossArchSettings>;
}): CrossArchResult {
  const settings = { ...DEFAULT_CROSS_ARCH_SETTINGS, ...input.settings };
  const ran = input.histories.flatMap(({ arch, history }) => {
    const entry = history.find((payload) => payload.payload === input.payload);
    return entry ? [{ arch, entry, others: history.filter((payload) => payload !== entry) }] : [];
  });
  const judged = ran.filter(({ others }) => others.length >= settings.minimumHistory);
  const empty = {
    payload: input.payload,
    arches: judged.map(({ arch }) => arch),
    findings: [],
    familySize: 0,
  };
  if (ran.length < 2)
    return { ...empty, notJudged: `the payload ran on ${ran.length} arch(es): nothing to compare` };
  if (judged.length < 2) {
    return {
      ...empty,
      notJudged: `fewer than two arches have ${settings.minimumHistory} earlier payloads to say how much payloads differ anyway`,
    };
  }
  const rhoAt = payloadCorrelation(judged.map(({ others }) => others));
  const names = new Set(judged.flatMap(({ entry }) => Object.keys(entry.tests)));
  const family: Omit<CrossArchDifference, "qValue">[] = [];
  for (const test of names) {
    const counts = judged.flatMap(({ arch, entry }) => {
      const found = entry.tests[test];
      return found && found.executions > 0
        ? [{ arch, executions: found.executions, failures: failedIterations(found) }]
        : [];
    });
    if (counts.length < 2) continue;
    const executions = counts.reduce((sum, c) => sum + c.executions, 0);
    const failures = counts.reduce((sum, c) => sum + c.failures, 0);
    if (failures === 0) continue;
    const rho = rhoAt(failures / executions);
    for (const one of counts) {
      const rest = counts.filter((other) => other !== one);
      const others = {
        executions: executions - one.executions,
        failures: failures - one.failures,
      };
      const { pValue, minimum } = clusterExactTest({
        prSizes: [one.executions],
        baselineSizes: rest.map((other) => other.executions),
        prFailed: one.failures,
        baselineFailed: others.failures,
        rho,
      });
      if (minimum > settings.q) continue;
      family.push({
        test,
        arch: one.arch,
        counts: { executions: one.executions, failures: one.failures },
        others,
        pValue,
        rho,
      });
    }
  }
  const qValues = benjaminiHochberg(family.map((candidate) => candidate.pValue));
  const findings = family
    .map((candidate, index) => ({ ...candidate, qValue: qValues[index]! }))
    .filter(
      (candidate) =>
        candidate.qValue <= settings.q &&
        candidate.counts.failures >= settings.minimumFailures &&
        candidate.counts.failures / candidate.counts.executions -
          candidate.others.failures / candidate.others.executions >
          settings.minimumDifference,
    )
    .sort((a, b) => a.pValue - b.pValue);
  return { ...empty, findings, familySize: family.length };
}
