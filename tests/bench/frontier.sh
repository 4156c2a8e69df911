#!/usr/bin/env bash
# Wall time of a frontier of 10 concurrency points (MODEL.md section 4b: a
# sweep over --max-concurrency 1,2,...,512 of vLLM's random dataset, 1024 in,
# 128 out, 2000 prompts, on preset h100-llama-3.1-8b, -j 2), beside a
# baseline timed in the same run: one `infersim run` of the same load at
# 64 in flight. Medians of N. The target: under 5 s.
#
#   tests/bench/frontier.sh [N] [INFERSIM]   (default N = 5, build/infersim)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-5}
infersim=${2:-$root/build/infersim}
[ -x "$infersim" ] || { echo "frontier.sh: build first (.ci/setup)" >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
. "$root/tests/bench/common.sh"

load=(--dataset-name random --random-input-len 1024 --random-output-len 128 --num-prompts 2000
      --settings "$root/settings/presets/h100-llama-3.1-8b.json" --plots none --force)
for _ in $(seq "$runs"); do
  wall_s "$infersim" run "${load[@]}" --max-concurrency 64 --per-request none \
    --output "$scratch/run" >> "$scratch/baseline.times"
  wall_s "$infersim" sweep "${load[@]}" -j 2 --vary max-concurrency=1,2,4,8,16,32,64,128,256,512 \
    --output "$scratch/sweep" >> "$scratch/frontier.times"
done
baseline=$(median < "$scratch/baseline.times")
frontier=$(median < "$scratch/frontier.times")
awk -v f="$frontier" -v b="$baseline" 'BEGIN {
  printf "frontier of 10 points, -j 2: %.3f s (target: under 5 s); one run at 64 in flight: %.3f s; %.1f x\n", f, b, f / b }'
echo "(median of $runs; every run's seconds: frontier $(tr '\n' ' ' < "$scratch/frontier.times")| baseline $(tr '\n' ' ' < "$scratch/baseline.times"))"
