#!/usr/bin/env bash
# Disaggregated prefill and decode (BATCHING.md section 12) against the
# colocated fleet of as many replicas, timed in the same run (these machines
# are shared and noisy): the Mooncake conversation hour on 2 prefill + 6
# decode replicas and on 8 colocated ones, least-requests routers, default
# knobs.
#   - the server alone (build/batching_bench, best of 3 turns an invocation,
#     process time, the trace's reading left out);
#   - the whole run (`infersim run --recorded --per-request none --plots none`
#     with settings/disaggregated_h100.json against `--preset
#     h100-llama-3.1-8b --replicas 8`), process time (user + sys).
# Seven turns taken in turn, every turn printed, medians, the spread (least
# and most) and the ratio split / colocated.
#
#   tests/bench/disaggregated.sh [BUILD_DIR]
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
infersim=$build/infersim
[ -x "$infersim" ] && [ -x "$build/batching_bench" ] || {
  echo "disaggregated.sh: build first (.ci/setup)" >&2
  exit 2
}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
trace=$root/trace/mooncake_conversation_trace.jsonl
server() {  # ARGS...: the server's best of 3 turns, s
  "$build/batching_bench" "$trace" --router least-requests --decode-router least-requests \
    --turns 3 "$@" | awk '/^run:/ { print $6 }'
}
whole() {  # LABEL ARGS...: user + sys of one run, s
  local label=$1
  shift
  /usr/bin/time -f "%U %S" -o "$scratch/t" "$infersim" run --recorded --trace "$trace" \
    --per-request none --plots none --force --output "$scratch/$label" "$@" > /dev/null
  awk '{ printf "%.2f\n", $1 + $2 }' "$scratch/t"
}
ss=() sc=() ws=() wc=()
for turn in 1 2 3 4 5 6 7; do
  ss+=("$(server --split 2:6)")
  sc+=("$(server --replicas 8)")
  ws+=("$(whole split --settings "$root/settings/disaggregated_h100.json")")
  wc+=("$(whole colocated --preset h100-llama-3.1-8b --replicas 8 --router least-requests)")
  echo "turn $turn: server split ${ss[-1]} s, colocated ${sc[-1]} s; whole run split ${ws[-1]} s, colocated ${wc[-1]} s"
done
stats() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%s (%s to %s)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "server alone, median (least to most): split $(stats "${ss[@]}") s, colocated $(stats "${sc[@]}") s, ratio $(ratio "$(median "${ss[@]}")" "$(median "${sc[@]}")")"
echo "whole run,    median (least to most): split $(stats "${ws[@]}") s, colocated $(stats "${wc[@]}") s, ratio $(ratio "$(median "${ws[@]}")" "$(median "${wc[@]}")")"
grep -o '"kv_transfers": [0-9]*\|"kv_transfer_p99_s": [0-9.e-]*\|"ttft_p99_s": [0-9.e-]*\|"tpot_p99_s": [0-9.e-]*' "$scratch/split/summary.json" | tr '\n' ' '
echo
