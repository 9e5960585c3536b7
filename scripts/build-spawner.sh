#!/usr/bin/env bash
# Builds the runner's process spawner (src/runner/native/spawner.c), which starts test processes
# without forking the runner's large Node process. Usage: bash scripts/build-spawner.sh [OUTPUT]
# (default src/runner/native/netstress-spawner, beside its source, where the runner looks for it).
# Without a C compiler it says so and exits 0: the runner then starts tests with Node's spawn.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
src="$root/src/runner/native/spawner.c"
out="${1:-$root/src/runner/native/netstress-spawner}"
cc="${CC:-cc}"
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "build-spawner: no C compiler ($cc); the runner will start tests with Node's spawn (apt-get install gcc libc6-dev to build it)" >&2
  exit 0
fi
[ -x "$out" ] && [ "$out" -nt "$src" ] && exit 0
mkdir -p "$(dirname "$out")"
# Built beside the output and renamed: a runner starting meanwhile never sees half a binary.
"$cc" -O2 -Wall -Wextra -Werror -std=gnu11 -o "$out.tmp.$$" "$src"
mv -f "$out.tmp.$$" "$out"
