#!/usr/bin/env bash
# An autoscaled fleet against the fixed one it replaces, timed in the same
# run: the Mooncake conversation hour on 8 H100 replicas (preset
# h100-llama-3.1-8b, prefix router), fixed, and the same class autoscaled from
# 2 to 16 replicas on a target of 4 requests a replica (BATCHING.md section
# 11). `infersim run --recorded --per-request none --plots none`, process time
# (user + sys), medians of 7 turns taken in turn, every turn printed, and the
# autoscaled/fixed ratio.
#
#   tests/bench/fleet.sh [BUILD_DIR]
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
infersim=$build/infersim
[ -x "$infersim" ] || { echo "fleet.sh: build first (.ci/setup)" >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
trace=$root/trace/mooncake_conversation_trace.jsonl
cat > "$scratch/fleet.json" <<'JSON'
{"server": {"kind": "batching"},
 "batching": {"router": "prefix",
  "fleet": [{"name": "h100", "preset": "h100-llama-3.1-8b", "replicas": 8,
             "price_per_gpu_hour": 3,
             "autoscale": {"min": 2, "max": 16, "target_requests": 4}}]}}
JSON
common=(run --recorded --trace "$trace" --per-request none --plots none --force)
cpu() { # label args...
  local label=$1; shift
  /usr/bin/time -f "%U %S" -o "$scratch/time" "$infersim" "${common[@]}" "$@" \
    --output "$scratch/$label" > /dev/null
  awk '{ printf "%.2f\n", $1 + $2 }' "$scratch/time"
}
fixed=() autoscaled=()
for turn in 1 2 3 4 5 6 7; do
  f=$(cpu fixed --preset h100-llama-3.1-8b --replicas 8 --router prefix)
  a=$(cpu autoscaled --settings "$scratch/fleet.json")
  fixed+=("$f") autoscaled+=("$a")
  echo "turn $turn: fixed $f s, autoscaled $a s"
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
mf=$(median "${fixed[@]}")
ma=$(median "${autoscaled[@]}")
echo "median process time: fixed $mf s, autoscaled $ma s, ratio $(awk -v a="$ma" -v f="$mf" 'BEGIN { printf "%.2f", a / f }')"
grep -o '"scale_ups": [0-9]*\|"peak_replicas": [0-9]*\|"cost_usd": [0-9.]*' "$scratch/autoscaled/summary.json" | tr '\n' ' '
echo
