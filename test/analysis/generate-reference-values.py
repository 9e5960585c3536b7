#!/usr/bin/env python3
"""Reference values for the analysis statistics, computed independently with scipy.

The cluster test is computed by brute force (every split of the failures over the clusters,
weighted by scipy's beta-binomial), not by the convolution the TypeScript code uses.

Run from the repository root:  python3 test/analysis/generate-reference-values.py
It rewrites test/fixtures/analysis-reference-values.json; the tests compare the TypeScript
implementation against it. Needs scipy >= 1.11 (false_discovery_control).
"""
import itertools
import json
import random
from pathlib import Path

import scipy
from scipy.special import digamma, gammaln, polygamma
from scipy.stats import betabinom, binom, false_discovery_control, fisher_exact

rng = random.Random(20240611)


def fisher_cases():
    tables = set()
    # Every table with small arms, including all-zero rows and columns.
    for n1 in range(0, 7):
        for n2 in range(0, 7):
            for a in range(0, n1 + 1):
                for c in range(0, n2 + 1):
                    tables.add((a, n1 - a, c, n2 - c))
    # Typical stress-run sizes: 10 and 20 runs per arm.
    for n in (10, 20):
        for a in range(0, n + 1):
            for c in range(0, n + 1):
                tables.add((a, n - a, c, n - c))
    # Unequal arms, history-sized baselines and large, lopsided tables (tiny p-values).
    for _ in range(400):
        n1 = rng.randint(1, 60)
        n2 = rng.randint(1, 600)
        a = rng.randint(0, n1)
        c = rng.randint(0, n2)
        tables.add((a, n1 - a, c, n2 - c))
    for a, b, c, d in [(250, 0, 0, 250), (500, 0, 0, 500), (900, 100, 50, 950), (0, 1000, 1000, 0), (37, 3, 2, 38)]:
        tables.add((a, b, c, d))
    cases = []
    for a, b, c, d in sorted(tables):
        _, p = fisher_exact([[a, b], [c, d]], alternative="greater")
        cases.append({"table": [a, b, c, d], "p": float(p)})
    return cases


def bh_cases():
    cases = []
    for size in (1, 2, 5, 17, 100, 1000):
        p = [rng.random() ** rng.choice([1, 3, 8]) for _ in range(size)]
        if size > 5:
            p[0] = p[1]  # ties
        cases.append({"p": p, "q": [float(x) for x in false_discovery_control(p, method="bh")]})
    return cases


def required_passes(attempts, percent, corpus_size=250, alpha=0.05):
    """The job-run-aggregator rule, written from its description: one less than the first pass count
    whose deficit against a corpus passing at `percent` is not significant (Fisher, greater)."""
    corpus_passes = round(corpus_size * percent / 100)  # Python rounds ties to even
    corpus_failures = corpus_size - corpus_passes
    for passes in range(0, attempts + 1):
        _, p = fisher_exact([[corpus_passes, passes], [corpus_failures, attempts - passes]], alternative="greater")
        if p > alpha:
            return max(0, passes - 1)
    raise AssertionError("unreachable: all passing is never significant")


def required_passes_tables(max_attempts):
    strict = [[required_passes(n, pct) for pct in range(0, 101)] for n in range(0, max_attempts + 1)]
    with_pity = [[min(value, max(0, n - 2)) for value in row] for n, row in enumerate(strict)]
    return {"maxAttempts": max_attempts, "strict": strict, "withPity": with_pity}


def binomial_cases():
    cases = []
    for _ in range(200):
        n = rng.randint(1, 60)
        k = rng.randint(0, n + 1)
        p = rng.choice([0.001, 0.01, 0.05, rng.random(), 0.5, 0.9, 0.999])
        cases.append({"n": n, "k": k, "p": p, "tail": float(binom.sf(k - 1, n, p))})
    return cases


def cluster_pmf(n, p, rho):
    """P(X = x) for one cluster: beta-binomial with mean p and intra-cluster correlation rho."""
    if rho == 0:
        return [binom.pmf(x, n, p) for x in range(n + 1)]
    scale = (1 - rho) / rho
    return [betabinom.pmf(x, n, p * scale, (1 - p) * scale) for x in range(n + 1)]


def cluster_test(pr_sizes, baseline_sizes, pr_failed, baseline_failed, rho):
    """The conditional cluster test by brute force: every way the failures can fall on the clusters."""
    failed = pr_failed + baseline_failed
    if failed == 0:
        return 1.0
    p = failed / (sum(pr_sizes) + sum(baseline_sizes))
    sizes = list(pr_sizes) + list(baseline_sizes)
    pmfs = [cluster_pmf(n, p, rho) for n in sizes]
    tail = 0.0
    total = 0.0
    for counts in itertools.product(*[range(n + 1) for n in sizes]):
        if sum(counts) != failed:
            continue
        weight = 1.0
        for pmf, x in zip(pmfs, counts):
            weight *= pmf[x]
        total += weight
        if sum(counts[: len(pr_sizes)]) >= pr_failed:
            tail += weight
    return min(1.0, tail / total)


def cluster_cases():
    cases = []
    shapes = [([3, 3], [3, 3]), ([2, 3, 1], [4, 2]), ([4], [2, 2, 2]), ([2, 2, 2], [2, 2, 2]), ([5, 5], [5])]
    for pr_sizes, baseline_sizes in shapes:
        for rho in (0.0, 0.05, 0.3, 0.8):
            for _ in range(6):
                a = rng.randint(0, sum(pr_sizes))
                c = rng.randint(0, sum(baseline_sizes))
                cases.append(
                    {
                        "prSizes": pr_sizes,
                        "baselineSizes": baseline_sizes,
                        "prFailed": a,
                        "baselineFailed": c,
                        "rho": rho,
                        "p": cluster_test(pr_sizes, baseline_sizes, a, c, rho),
                    }
                )
    return cases


def special_function_cases():
    xs = [0.001, 0.02, 0.3, 0.5, 1, 1.5, 2.5, 7, 11.9, 12, 33.3, 250, 1e4]
    return [{"x": x, "logGamma": float(gammaln(x)), "digamma": float(digamma(x)), "trigamma": float(polygamma(1, x))} for x in xs]


def main():
    out = {
        "generatedWith": f"scipy {scipy.__version__}",
        "fisherGreater": fisher_cases(),
        "benjaminiHochberg": bh_cases(),
        "requiredPasses": required_passes_tables(24),
        "binomialUpperTail": binomial_cases(),
        "clusterTest": cluster_cases(),
        "specialFunctions": special_function_cases(),
    }
    target = Path(__file__).parent.parent / "fixtures" / "analysis-reference-values.json"
    target.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    print(f"wrote {target} ({len(out['fisherGreater'])} Fisher tables)")


if __name__ == "__main__":
    main()
