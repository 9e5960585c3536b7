import { seededRandom } from "../../src/runner/seeded-random.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";

export interface SyntheticRunOptions {
  tests: number;
  iterations: number;
  seed: string;
  /** Every n-th test has its PR failure rate raised to `regressedRate`. */
  regressEvery?: number;
  regressedRate?: number;
  /** Retries of a failed attempt within its iteration. */
  retries?: number;
  /**
   * Clusters under test per arm, each running an equal share of the iterations and named in every
   * record's `cluster`; a quarter of them are bad (failure rates × 4 for half the tests). 0: no `cluster`.
   */
  clustersPerArm?: number;
}

const COMPONENTS = ["ovn-kubernetes", "sdn", "cluster-network-operator", "multus", "hyperkube"];

/**
 * Result records of a two-arm stress run, in the runner's order (iteration by iteration, both arms
 * interleaved). Most tests are solid, some flaky alike in both arms, every `regressEvery`-th one
 * worse in the PR. Deterministic for a seed.
 */
export function* syntheticRun({
  tests,
  iterations,
  seed,
  regressEvery = 0,
  regressedRate = 0.5,
  retries = 1,
  clustersPerArm = 0,
}: SyntheticRunOptions): Generator<ResultRecord> {
  const random = seededRandom(seed);
  const baseRates = Array.from({ length: tests }, () => {
    const draw = random();
    return draw < 0.8 ? 0 : draw < 0.95 ? 0.02 : 0.15;
  });
  const badClusters = {
    pr: Array.from({ length: clustersPerArm }, (_, k) => k % 4 === 0),
    baseline: Array.from({ length: clustersPerArm }, (_, k) => k % 4 === 1),
  };
  const clusterOf = (iteration: number) => Math.floor((iteration * clustersPerArm) / iterations);
  for (let iteration = 0; iteration < iterations; iteration++) {
    for (let test = 0; test < tests; test++) {
      for (const arm of ["pr", "baseline"] as const) {
        const regressed = arm === "pr" && regressEvery > 0 && test % regressEvery === regressEvery - 1;
        const cluster = clustersPerArm > 0 ? clusterOf(iteration) : -1;
        const weather = cluster >= 0 && badClusters[arm][cluster]! && test % 2 === 0 ? 4 : 1;
        // On clusters, a solid test still fails now and then (0.2%), more on a bad cluster.
        const rate = regressed
          ? regressedRate
          : cluster >= 0
            ? Math.min(1, (baseRates[test]! || 0.002) * weather)
            : baseRates[test]!;
        const name = `[sig-network] synthetic ${COMPONENTS[test % COMPONENTS.length]} case ${test} [Suite:openshift/conformance/parallel]`;
        for (let attempt = 0; attempt <= retries; attempt++) {
          const failed = random() < rate;
          yield {
            name,
            lifecycle: test % 17 === 0 ? "informing" : "blocking",
            duration: 800 + Math.floor(random() * 4000),
            startTime: "2024-06-11 10:00:00.000000 UTC",
            endTime: "2024-06-11 10:00:04.000000 UTC",
            result: failed ? "failed" : "passed",
            output: failed ? "connection to 10.128.2.14:8080 timed out after 30s" : "",
            ...(failed ? { error: "expected pod to reach service: i/o timeout" } : {}),
            arm,
            arch: "amd64",
            iteration,
            attempt,
            component: COMPONENTS[test % COMPONENTS.length]!,
            source: arm === "pr" && test % COMPONENTS.length === 0 ? "override" : "released",
            ...(cluster >= 0 ? { cluster: `${arm}-ci-cluster-${cluster}` } : {}),
          };
          if (!failed) break;
        }
      }
    }
  }
}
