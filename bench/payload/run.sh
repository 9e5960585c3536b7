#!/usr/bin/env bash
# Runs the discovery benchmark on a fresh machine: installs Debian's docker-registry when it is
# missing, then the bench. Usage: bash bench/payload/run.sh [--runs N] [--concurrency N]
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ ! -x /usr/bin/docker-registry ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends docker-registry
  # The package starts its own service; the bench starts one on a free loopback port instead.
  $sudo systemctl disable --now docker-registry >/dev/null 2>&1 || true
fi
[ -d node_modules ] || npm ci --no-audit --no-fund
exec node --import tsx bench/payload/plan-resolution.bench.ts "$@"
