#!/usr/bin/env bash
# Cluster-provider benchmark: 200 clusters under test provisioned and given back through the
# simulated Hive (which runs in a process of its own). The provider runs compiled, as in the image.
# Usage: bash bench/clusters/run.sh [RUNS]   (HOLD_MS: how long each lease is held, default 2000)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-1}
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
node node_modules/typescript/bin/tsc -p bench/clusters/tsconfig.json --outDir "$build" --noCheck
ln -s "$PWD/node_modules" "$build/node_modules"
# The emitted imports of our packages point at their emitted files, as scripts/build.mjs does.
node scripts/link-emitted-packages.mjs "$build"
cp -r src/redis/lua "$build/src/redis/lua"
for _ in $(seq "$runs"); do
  node "$build/bench/clusters/provision.bench.js"
done
