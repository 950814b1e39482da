#!/usr/bin/env bash
# The suite beside a CPU hog: one busy loop per core (nproc) for as long as the suite runs, at the
# suite's own priority, so that the suite's parallel workers (.mocharc.json, two) get about half
# the machine. The target is zero failures (CONTRIBUTING.md, "Speed and load"): a test that fails
# here depends on how fast the machine is. Arguments go to `npm test` (say `-- --grep delivery`);
# the exit code is the suite's.
set -uo pipefail
cd "$(dirname "$0")/.."

cores="$(nproc)"
hogs=()
stop_hogs() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null; done
  wait "${hogs[@]}" 2>/dev/null
}
trap stop_hogs EXIT
for _ in $(seq 1 "$cores"); do
  bash -c 'while :; do :; done' &
  hogs+=("$!")
done
echo "test-under-load: $cores busy loops running (pids ${hogs[*]})"

started=$(date +%s)
npm test "$@"
status=$?
echo "test-under-load: npm test exited $status after $(($(date +%s) - started)) s beside $cores busy loops"
exit "$status"
