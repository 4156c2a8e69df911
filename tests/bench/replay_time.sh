#!/usr/bin/env bash
# Process time (user + system CPU) of replaying the seed's trace with
# requests.csv written, median of N runs, beside a baseline timed in the same
# run: mawk summing two columns of the same file.
#
#   tests/bench/replay_time.sh [N]     (default N = 21; needs build/infersim)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-21}
infersim=$root/build/infersim
trace=$root/trace/azure_llm_code_1h.csv
[ -x "$infersim" ] || { echo "replay_time.sh: build first (.ci/setup)" >&2; exit 2; }
[ -f "$trace" ] || { echo "replay_time.sh: $trace missing; run trace/fetch" >&2; exit 2; }
awk_bin=$(command -v mawk || command -v awk)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# cpu_ms COMMAND...: user + system milliseconds of one run, from the shell's
# `times` (children's CPU time, millisecond resolution).
cpu_ms() {
  (
    "$@" > /dev/null 2>&1
    times > "$scratch/times"  # not in a pipeline: that would run in a child shell
    awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); t += p[1] * 60 + p[2] }
                           printf "%.1f\n", t * 1000 }' "$scratch/times"
  )
}
. "$root/tests/bench/common.sh"

for _ in $(seq "$runs"); do
  cpu_ms "$infersim" run --trace "$trace" --output "$scratch/run" --force >> "$scratch/replay"
  cpu_ms "$awk_bin" -F, 'NR>1{s+=$2+$3} END{print s}' "$trace" >> "$scratch/awk"
done
replay=$(median < "$scratch/replay")
baseline=$(median < "$scratch/awk")
echo "8819-request replay with requests.csv: ${replay} ms process time (median of $runs; target < 50 ms)"
echo "baseline, $(basename "$awk_bin") summing two columns of the same file: ${baseline} ms"
awk -v r="$replay" -v b="$baseline" 'BEGIN { if (b > 0) printf "ratio replay / baseline: %.1f\n", r / b;
                                            else print "ratio: baseline under the 10 ms clock resolution" }'
