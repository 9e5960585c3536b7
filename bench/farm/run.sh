#!/usr/bin/env bash
# Build-farm dispatch benchmark: 50 concurrent requests × 2 arches × 10 iterations = 1,000 shards
# against fake Kubernetes APIs. Runs it RUNS times (default 3) and prints each run and the medians.
# The bot side runs compiled (as in the image: npm run build), not through the tsx loader, whose
# hooks thread alone holds about 90 MB. Usage: bash bench/farm/run.sh [RUNS] [POD_SECONDS]
# Extra node flags, e.g. the Deployments' heap cap: BENCH_NODE_FLAGS=--max-old-space-size=1024
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}
pod_seconds=${2:-3}
out=$(mktemp)
build=$(mktemp -d)
trap 'rm -rf "$out" "$build"' EXIT
node node_modules/typescript/bin/tsc -p bench/farm/tsconfig.json --outDir "$build" --noCheck
# What the sources read beside themselves (the Redis scripts' Lua, …), as scripts/build.mjs copies it.
find src packages/*/src -type f ! -name '*.ts' ! -name netstress-spawner -print0 |
  while IFS= read -r -d '' file; do install -D -m 644 "$file" "$build/$file"; done
ln -s "$PWD/node_modules" "$build/node_modules"
# The emitted imports of our packages point at their emitted files, as scripts/build.mjs does.
node scripts/link-emitted-packages.mjs "$build"
for _ in $(seq "$runs"); do
  # shellcheck disable=SC2086 # the flags are words
  node ${BENCH_NODE_FLAGS:-} "$build/bench/farm/dispatch.bench.js" "$pod_seconds" | tee -a "$out"
done
node -e '
  const runs = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const median = (key) => { const v = runs.map((r) => r[key]).sort((a, b) => a - b); return v[Math.floor(v.length / 2)]; };
  const keys = ["dispatchSeconds", "apiCallsPerShard", "peakRssMB", "rssBeforeDispatchMB", "allDoneSeconds"];
  console.log(`medians of ${runs.length} runs: ${keys.map((k) => `${k} ${median(k)}`).join(", ")}; twins ${runs.reduce((s, r) => s + r.twins, 0)}`);
' "$out"
