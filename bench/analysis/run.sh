#!/usr/bin/env bash
# Analysis benchmark: 10,000 tests × 20 iterations × 2 arms (≈400,000 records) from results.jsonl
# to every report, without and with clusters, and the cluster-weather simulation.
# Usage: bash bench/analysis/run.sh   (installs hyperfine with apt-get when it is missing)
set -euo pipefail
if ! command -v hyperfine > /dev/null; then
  if [ "$(id -u)" = 0 ]; then apt-get install -y hyperfine; else sudo apt-get install -y hyperfine; fi
fi
cd "$(dirname "$0")/../.."
work=${BENCH_DIR:-/tmp/netstress-bench-analysis}
mkdir -p "$work"
if [ ! -f "$work/results.jsonl" ]; then
  node --import tsx bench/analysis/write-synthetic-results.ts "$work/results.jsonl" 10000 20 bench
fi
if [ ! -f "$work/clusters/results.jsonl" ]; then
  # The same shape, each arm on its own 5 clusters × 4 iterations, every record naming its cluster.
  mkdir -p "$work/clusters"
  node --import tsx bench/analysis/write-synthetic-results.ts "$work/clusters/results.jsonl" 10000 20 bench 5
fi
wc -l "$work/results.jsonl" "$work/clusters/results.jsonl"

echo "== in-process analyzeRun (read, judge, write all reports)"
node --import tsx bench/analysis/time-analyze-run.ts "$work/results.jsonl" "$work/out" 7

echo "== whole CLI, start-up included (exit 1 is expected: the data has regressions)"
hyperfine --warmup 1 --runs 7 --ignore-failure --export-json "$work/hyperfine.json" \
  "node bin/netstress.js analyze --pr $work/results.jsonl --out $work/out"

echo "== peak memory of the whole CLI"
/usr/bin/time -v node bin/netstress.js analyze --pr "$work/results.jsonl" --out "$work/out" > /dev/null 2> "$work/time.txt" || true
grep -E "Maximum resident set size|Elapsed \(wall clock\)" "$work/time.txt"

echo "== with clusters (the cluster rule): in-process, whole CLI, peak memory"
node --import tsx bench/analysis/time-analyze-run.ts "$work/clusters/results.jsonl" "$work/clusters/out" 7
hyperfine --warmup 1 --runs 7 --ignore-failure --export-json "$work/clusters/hyperfine.json" \
  "node bin/netstress.js analyze --pr $work/clusters/results.jsonl --out $work/clusters/out"
/usr/bin/time -v node bin/netstress.js analyze --pr "$work/clusters/results.jsonl" --out "$work/clusters/out" > /dev/null 2> "$work/clusters/time.txt" || true
grep -E "Maximum resident set size|Elapsed \(wall clock\)" "$work/clusters/time.txt"

echo "== the whole CLI as the image runs it (compiled build), with and without clusters"
npm run build > /dev/null
hyperfine --warmup 1 --runs 9 --ignore-failure -N --export-json "$work/hyperfine-compiled.json" \
  "node bin/netstress-compiled.js analyze --pr $work/clusters/results.jsonl --out $work/clusters/out-compiled" \
  "node bin/netstress-compiled.js analyze --pr $work/results.jsonl --out $work/out-compiled"

echo "== cluster-weather simulation: cluster rule beside the iteration rule (takes minutes)"
node --import tsx bench/analysis/cluster-weather-simulation.ts "${SIM_DATASETS:-500}" "${SIM_TESTS:-1000}"
