#!/usr/bin/env bash
# Installs the Debian packages the test suite starts as its own loopback services (Redis, an OCI
# registry), the browser the report tests drive, kubectl (Debian's kubernetes-client), which the
# simulated-cluster tests run against their API servers and the deploy tests render kustomizations
# with, and the C compiler that builds the runner's process spawner (scripts/build-spawner.sh). Does
# nothing when they are already present.
set -euo pipefail
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
[ -x /usr/bin/docker-registry ] || need+=(docker-registry)
[ -x /usr/bin/chromium ] || need+=(chromium)
command -v kubectl >/dev/null 2>&1 || need+=(kubernetes-client)
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing system packages: ${need[*]} — install them with: sudo apt-get install -y ${need[*]}" >&2
  exit 2
fi
echo "installing system packages: ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# The Debian packages start their services; the tests start their own on free ports instead.
systemctl disable --now docker-registry >/dev/null 2>&1 || true
