#!/usr/bin/env bash
# Wall time of a 100-point sweep of the seed's trace on 2 threads (--vary
# cores=1:100:1, recorded alone, then recorded and synthetic), as points per
# second, beside a baseline timed in the same run: one single
# `infersim run --recorded --per-request none` of the same trace. Medians of N.
#
#   tests/bench/sweep_speed.sh [N] [INFERSIM]   (default N = 3, build/infersim)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-3}
infersim=${2:-$root/build/infersim}
trace=$root/trace/azure_llm_code_1h.csv
[ -x "$infersim" ] || { echo "sweep_speed.sh: build first (.ci/setup)" >&2; exit 2; }
[ -f "$trace" ] || { echo "sweep_speed.sh: $trace missing; run trace/fetch" >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

. "$root/tests/bench/common.sh"

for _ in $(seq "$runs"); do
  wall_s "$infersim" run --recorded --per-request none --trace "$trace" \
    --output "$scratch/run" --force >> "$scratch/baseline.times"
  wall_s "$infersim" sweep --vary cores=1:100:1 --modes recorded -j 2 --trace "$trace" \
    --output "$scratch/recorded" --force >> "$scratch/recorded.times"
  wall_s "$infersim" sweep --vary cores=1:100:1 --modes recorded,synthetic -j 2 --trace "$trace" \
    --output "$scratch/both" --force >> "$scratch/both.times"
done
baseline=$(median < "$scratch/baseline.times")
recorded=$(median < "$scratch/recorded.times")
both=$(median < "$scratch/both.times")
echo "baseline, one infersim run --recorded --per-request none of the 8819 requests: ${baseline} s"
for pair in "recorded:$recorded:1" "recorded,synthetic:$both:2"; do
  IFS=: read -r modes seconds per_point <<< "$pair"
  awk -v m="$modes" -v s="$seconds" -v b="$baseline" -v k="$per_point" 'BEGIN {
    printf "100-point sweep, --modes %s, -j 2: %.3f s, %.1f points/s", m, s, 100 / s
    if (b > 0) printf ", %.1f x the baseline, %.3f x %d baseline runs", s / b, s / (100 * k * b), 100 * k
    printf "\n" }'
done
echo "(median of $runs; the baseline is a whole process: read and hash the trace, replay, write its folder; a sweep reads the trace once)"
