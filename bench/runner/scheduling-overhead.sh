#!/usr/bin/env bash
# Runner scheduling overhead: 2,000 executions of a no-op OTE test at parallelism 4, through
# `netstress run` versus `xargs -P 4` invoking the same binary with the same arguments.
# Usage: npm run bench:runner [-- ROUNDS [KINDS]]   (ROUNDS of each command, default 5; KINDS "sh node" by default)
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
# Rounds, not blocks: each round times every command once (hyperfine --runs 1), in an order that
# rotates, so that a shared machine's drift lands on all three alike; the ratios are taken within
# each round and their median reported beside the medians of the times.
for kind in ${2:-sh node}; do
  bin="$work/$kind-noop-tests-ext"
  echo "== $kind no-op binary: $runs rounds =="
  names=("netstress run" "netstress run (compiled)" "xargs -P 4")
  commands=(
    "node bin/netstress.js run --binary noop=$bin --iterations 2000 --parallel 4 --retries 0 --seed 1 --out $work/out-$kind >/dev/null 2>&1"
    "node bin/netstress-compiled.js run --binary noop=$bin --iterations 2000 --parallel 4 --retries 0 --seed 1 --out $work/out-$kind >/dev/null 2>&1"
    "seq 2000 | xargs -P 4 -I{} $bin run-test -n '$test_name' -o jsonl >/dev/null"
  )
  for round in $(seq 0 "$runs"); do
    args=()
    for k in 0 1 2; do
      i=$(((k + round) % 3))
      args+=(-n "${names[$i]}" "${commands[$i]}")
    done
    # Round 0 warms the page cache and is not counted.
    hyperfine --runs 1 --style none --export-json "$work/$kind-$round.json" "${args[@]}" >/dev/null
    [ "$round" -gt 0 ] || rm "$work/$kind-0.json"
  done
  node -e '
    const fs = require("fs");
    const rounds = process.argv.slice(1).map((f) => JSON.parse(fs.readFileSync(f, "utf8")).results);
    const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
    const of = (round, name) => round.find((r) => r.command === name);
    const names = ["netstress run", "netstress run (compiled)", "xargs -P 4"];
    const wall = (name) => median(rounds.map((r) => of(r, name).mean));
    const cpu = (name) => rounds.reduce((s, r) => s + of(r, name).user + of(r, name).system, 0) / rounds.length;
    const ratios = (name) => rounds.map((r) => of(r, name).mean / of(r, "xargs -P 4").mean).sort((a, b) => a - b);
    const ratio = (name) => { const x = ratios(name); return `${median(x).toFixed(2)}x, ${x[0].toFixed(2)}–${x.at(-1).toFixed(2)}`; };
    console.log(`median wall: netstress run ${wall(names[0]).toFixed(2)} s, compiled ${wall(names[1]).toFixed(2)} s, xargs -P 4 ${wall(names[2]).toFixed(2)} s`);
    console.log(`ratio to xargs within each round (median, range): netstress run ${ratio(names[0])}; compiled ${ratio(names[1])}`);
    console.log(`mean CPU (user+system, children included): ${names.map((n) => `${n} ${cpu(n).toFixed(2)} s`).join(", ")}`);
  ' $(for round in $(seq 1 "$runs"); do echo "$work/$kind-$round.json"; done)
done
