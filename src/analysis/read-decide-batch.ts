import { CROSSOVER } from "./decide-batch-shapes.ts";
import { DecideInputError } from "./decide-input-error.ts";
import type { DecideHistoryPayload, DecideRecord } from "./decide-records.ts";
import type { DecideState, TestEvidence } from "./decide-state.ts";
import { pairedEValues } from "./paired-e-values.ts";

interface Tally {
  runs: number;
  failed: number;
}

/** The evidence of a test with no contrast yet. */
function emptyEvidence(name: string, rise: number): TestEvidence {
  return {
    name,
    executions: { pr: 0, baseline: 0 },
    contrasts: [],
    waiting: [],
    confirmations: [],
    summary: summarize([], rise),
  };
}

function summarize(contrasts: TestEvidence["contrasts"], rise: number): TestEvidence["summary"] {
  const values = contrasts.flatMap((entry) => entry.values);
  const e = pairedEValues({ contrasts: values, rise });
  return {
    contrasts: values.length,
    meanContrast: values.length > 0 ? values.reduce((sum, x) => sum + x, 0) / values.length : null,
    regression: e.regression,
    clean: e.clean,
  };
}

/**
 * The decision step's state once it has read one more batch: what each cluster ran, and per test
 * its executions and the cluster contrasts the batch completes (shared clusters: one per cluster
 * that ran both arms of the test in this batch; crossover: one per cluster upgraded in this batch,
 * its PR runs against all its baseline runs before; a new cluster that starts on the PR payload,
 * while `history` has payloads left, its PR runs against the next history payload's) and, for a
 * suspect test (suspected before this batch), the confirmation contrasts it completes: each new
 * cluster of the batch that started on the PR payload once no history payload is left, against the
 * batch's new cluster on the baseline payload of the same rank. Costs the batch's records and the
 * contrasts of the tests it adds to; the state given is left as it was.
 */
export function readDecideBatch(
  state: DecideState,
  records: readonly DecideRecord[],
  history: readonly DecideHistoryPayload[] = [],
): DecideState {
  const batch = state.batches;
  const clusters = [...state.clusters];
  const clusterIndex = new Map(clusters.map((cluster, index) => [cluster.name, index]));
  const testIndex = new Map(state.tests.map((test, index) => [test.name, index]));
  const tests = [...state.tests];
  // This batch, per cluster: the arms it ran; per test, cluster and arm: iterations and whether one failed.
  const ran = new Map<number, { pr: boolean; baseline: boolean }>();
  const touched = new Map<number, Map<string, Map<number, boolean>>>();
  for (const record of records) {
    let cluster = clusterIndex.get(record.cluster);
    if (cluster === undefined) {
      cluster = clusters.push({ name: record.cluster, baseline: false }) - 1;
      clusterIndex.set(record.cluster, cluster);
    }
    const arms = ran.get(cluster) ?? { pr: false, baseline: false };
    arms[record.arm] = true;
    ran.set(cluster, arms);
    let test = testIndex.get(record.name);
    if (test === undefined) {
      test = tests.push(emptyEvidence(record.name, state.rise)) - 1;
      testIndex.set(record.name, test);
    }
    let outcomes = touched.get(test);
    if (!outcomes) {
      const evidence = tests[test]!;
      tests[test] = { ...evidence, executions: { ...evidence.executions } };
      touched.set(test, (outcomes = new Map()));
    }
    tests[test]!.executions[record.arm]++;
    if (record.result === "skipped") continue;
    const key = `${cluster}\n${record.arm}`;
    const iterations = outcomes.get(key) ?? new Map<number, boolean>();
    outcomes.set(key, iterations);
    iterations.set(
      record.iteration,
      (iterations.get(record.iteration) ?? false) || record.result === "failed",
    );
  }

  const upgradedNow = new Set<number>();
  const standing = new Set<number>();
  let historyUsed = clusters.filter((cluster) => cluster.history !== undefined).length;
  for (const [cluster, arms] of [...ran].sort(([a], [b]) => a - b)) {
    const known = clusters[cluster]!;
    if (state.payloads === "differ") {
      if (arms.pr && arms.baseline)
        throw new DecideInputError(
          `cluster ${known.name} ran both arms in batch ${batch + 1}: with different payloads a cluster runs one payload at a time`,
        );
      if (arms.baseline && known.firstPr !== undefined)
        throw new DecideInputError(
          `cluster ${known.name} ran the baseline payload in batch ${batch + 1} after the PR payload in batch ${known.firstPr + 1}: a cluster moves from baseline to PR, never back`,
        );
    }
    // A cluster that starts on the PR payload stands against a history payload, while any is left.
    const againstHistory =
      state.payloads === "differ" &&
      arms.pr &&
      !known.baseline &&
      known.firstPr === undefined &&
      historyUsed < history.length;
    if (againstHistory) standing.add(cluster);
    else if (arms.pr && known.baseline && known.firstPr === undefined) upgradedNow.add(cluster);
    clusters[cluster] = {
      ...known,
      ...(arms.pr && known.firstPr === undefined ? { firstPr: batch } : {}),
      baseline: known.baseline || arms.baseline,
      ...(againstHistory ? { history: historyUsed++ } : {}),
    };
  }

  const ranInOrder = [...ran.keys()].sort((a, b) => a - b);
  // Confirmation pairs: the batch's new clusters on the PR payload (no history payload behind them)
  // and its new ones on the baseline payload, by rank; none of them was upgraded.
  const started = ranInOrder.filter((cluster) => cluster >= state.clusters.length);
  const startedPr = started.filter((c) => ran.get(c)!.pr && clusters[c]!.history === undefined);
  const startedBaseline = started.filter((c) => ran.get(c)!.baseline);
  const pairs =
    state.payloads === "differ"
      ? startedPr.slice(0, startedBaseline.length).map((pr, rank) => [pr, startedBaseline[rank]!] as const)
      : [];
  for (const [test, outcomes] of touched) {
    const evidence = tests[test]!;
    const tallyOf = (cluster: number, arm: "pr" | "baseline"): Tally => {
      let failed = 0;
      const iterations = outcomes.get(`${cluster}\n${arm}`);
      for (const value of iterations?.values() ?? []) if (value) failed++;
      return { runs: iterations?.size ?? 0, failed };
    };
    // A half's iterations in blocks of consecutive ones, in iteration order.
    const blocksOf = (cluster: number, arm: "pr" | "baseline"): Tally[] => {
      const iterations = [...(outcomes.get(`${cluster}\n${arm}`) ?? [])].sort(([a], [b]) => a - b);
      const blocks: Tally[] = [];
      for (let at = 0; at < iterations.length; at += CROSSOVER.block) {
        const block = iterations.slice(at, at + CROSSOVER.block);
        blocks.push({ runs: block.length, failed: block.filter(([, failed]) => failed).length });
      }
      return blocks;
    };
    const added: [number, number][] = [];
    const contrast = (cluster: number, pr: Tally, baseline: Tally) => {
      if (pr.runs > 0 && baseline.runs > 0)
        added.push([cluster, pr.failed / pr.runs - baseline.failed / baseline.runs]);
    };
    let waiting = evidence.waiting;
    if (state.payloads === "same") {
      for (const cluster of ranInOrder)
        contrast(cluster, tallyOf(cluster, "pr"), tallyOf(cluster, "baseline"));
    } else {
      // Baseline runs wait for their cluster's upgrade; its first PR batch completes the contrast.
      const pending = new Map(waiting.map((entry) => [entry.cluster, entry]));
      for (const cluster of ran.keys()) {
        const blocks = blocksOf(cluster, "baseline");
        if (blocks.length === 0) continue;
        pending.set(cluster, { cluster, blocks: [...(pending.get(cluster)?.blocks ?? []), ...blocks] });
      }
      for (const cluster of [...upgradedNow, ...standing].sort((a, b) => a - b)) {
        const index = clusters[cluster]!.history;
        if (index === undefined) {
          // Through its upgrade: each block of its PR half against the baseline block of that rank.
          const baseline = pending.get(cluster)?.blocks ?? [];
          blocksOf(cluster, "pr").forEach((block, rank) => {
            if (rank < baseline.length) contrast(cluster, block, baseline[rank]!);
          });
        } else {
          // Against a history payload: one contrast, as the history's weather is not this cluster's.
          const counts = history[index]!.tests[evidence.name];
          contrast(cluster, tallyOf(cluster, "pr"), {
            runs: counts?.executions ?? 0,
            failed: (counts?.failures ?? 0) + (counts?.flakes ?? 0),
          });
        }
        pending.delete(cluster);
      }
      waiting = [...pending.values()];
    }
    const confirmations = [...evidence.confirmations];
    if (evidence.suspect && evidence.suspect.after <= batch)
      for (const [pr, baseline] of pairs) {
        const [p, b] = [tallyOf(pr, "pr"), tallyOf(baseline, "baseline")];
        if (p.runs > 0 && b.runs > 0) confirmations.push(p.failed / p.runs - b.failed / b.runs);
      }
    if (added.length === 0) {
      tests[test] = { ...evidence, waiting, confirmations };
      continue;
    }
    const contrasts = [...evidence.contrasts];
    for (const [cluster, value] of added) {
      const at = contrasts.findIndex((entry) => entry.cluster >= cluster);
      if (at >= 0 && contrasts[at]!.cluster === cluster)
        contrasts[at] = { cluster, values: [...contrasts[at]!.values, value] };
      else contrasts.splice(at < 0 ? contrasts.length : at, 0, { cluster, values: [value] });
    }
    tests[test] = {
      ...evidence,
      waiting,
      confirmations,
      contrasts,
      summary: summarize(contrasts, state.rise),
    };
  }
  return { ...state, batches: batch + 1, records: state.records + records.length, clusters, tests };
}
