#!/usr/bin/env bash
# A month of runs on disk, with and without retention (bench/disk/README.md). Needs only Node and
# the project's dependencies; writes about 250 MB under the temp directory and removes it.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -d node_modules ] || npm ci --no-audit --no-fund
exec node --import tsx bench/disk/month-of-runs.bench.ts "$@"
