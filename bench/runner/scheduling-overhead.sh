#!/usr/bin/env bash
# Runner scheduling overhead: 2,000 executions of a no-op OTE test at parallelism 4, through
# `netstress run` versus `xargs -P 4` invoking the same binary with the same arguments.
# Usage: npm run bench:runner [-- RUNS [KINDS]]   (RUNS per command, default 5; KINDS "sh node" by default)
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v hyperfine >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "hyperfine is missing — install it with: sudo apt-get install -y hyperfine" >&2
    exit 2
  fi
  echo "installing hyperfine" >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends hyperfine >/dev/null
fi
[ -d node_modules ] || npm ci --no-audit --no-fund >/dev/null
# The compiled build is what the image runs; it is timed beside the sources run through tsx. Both
# start tests from the process spawner, built here for the sources and by the build for dist/.
bash scripts/build-spawner.sh
npm run build >/dev/null 2>&1
runs=${1:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node --import tsx bench/runner/write-noop-binaries.ts "$work"
test_name='[sig-network] no-op'
for kind in ${2:-sh node}; do
  bin="$work/$kind-noop-tests-ext"
  echo "== $kind no-op binary =="
  hyperfine --runs "$runs" --warmup 1 --export-json "$work/$kind.json" \
    -n "netstress run" "node bin/netstress.js run --binary noop=$bin --iterations 2000 --parallel 4 --retries 0 --seed 1 --out $work/out-$kind >/dev/null 2>&1" \
    -n "netstress run (compiled)" "node bin/netstress-compiled.js run --binary noop=$bin --iterations 2000 --parallel 4 --retries 0 --seed 1 --out $work/out-$kind >/dev/null 2>&1" \
    -n "xargs -P 4" "seq 2000 | xargs -P 4 -I{} $bin run-test -n '$test_name' -o jsonl >/dev/null"
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).results;
    const [runner, compiled, xargs] = r.map((x) => x.median);
    const cpu = (x) => x.user + x.system;
    console.log(`median: netstress run ${runner.toFixed(2)} s (${(runner / xargs).toFixed(2)}x), compiled ${compiled.toFixed(2)} s (${(compiled / xargs).toFixed(2)}x), xargs -P 4 ${xargs.toFixed(2)} s`);
    console.log(`mean CPU (user+system, children included): ${r.map((x) => `${x.command} ${cpu(x).toFixed(2)} s`).join(", ")}`);
  ' "$work/$kind.json"
done
