#!/usr/bin/env bash
# Analysis benchmark: 10,000 tests × 20 iterations × 2 arms (≈400,000 records) from results.jsonl
# to every report. Usage: bash bench/analysis/run.sh   (needs hyperfine: apt-get install -y hyperfine)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=${BENCH_DIR:-/tmp/netstress-bench-analysis}
mkdir -p "$work"
if [ ! -f "$work/results.jsonl" ]; then
  node --import tsx bench/analysis/write-synthetic-results.ts "$work/results.jsonl" 10000 20 bench
fi
wc -l "$work/results.jsonl"

echo "== in-process analyzeRun (read, judge, write all reports)"
node --import tsx bench/analysis/time-analyze-run.ts "$work/results.jsonl" "$work/out" 7

echo "== whole CLI, start-up included (exit 1 is expected: the data has regressions)"
hyperfine --warmup 1 --runs 7 --ignore-failure --export-json "$work/hyperfine.json" \
  "node bin/netstress.js analyze --pr $work/results.jsonl --out $work/out"

echo "== peak memory of the whole CLI"
/usr/bin/time -v node bin/netstress.js analyze --pr "$work/results.jsonl" --out "$work/out" > /dev/null 2> "$work/time.txt" || true
grep -E "Maximum resident set size|Elapsed \(wall clock\)" "$work/time.txt"
