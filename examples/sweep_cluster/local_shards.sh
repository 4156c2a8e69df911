#!/usr/bin/env bash
# Runs one sweep as N shards in N separate processes at once (xargs -P, the
# way a cluster runs them), merges the shards, and checks that the merged
# sweep.csv is byte for byte the one the same sweep writes unsharded, with a
# row for each of its 48 runs. Exit status 1 when it is not.
#
#   examples/sweep_cluster/local_shards.sh [--infersim PATH] [--output DIR] [--shards N]
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/../.." && pwd)
infersim=$root/build/infersim
output=$root/examples/sweep_cluster/output
shards=4
while [ $# -gt 0 ]; do
  case $1 in
    --infersim) infersim=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    --shards) shards=$2; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "local_shards.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
trace=$root/trace/azure_llm_code_1h.csv
[ -f "$trace" ] || { echo "local_shards.sh: $trace is missing; run trace/fetch" >&2; exit 2; }
export infersim trace output shards

# The sweep: 12 core counts by 2 decode budgets over the trace's first ten
# minutes, recorded and synthetic: 24 points, 48 runs.
sweep() {
  "$infersim" sweep --trace "$trace" --duration 600 --time-resolution 1s \
    --vary cores=2:24:2 --vary decode-budget=0.1,0.5 --modes recorded,synthetic --force "$@"
}
export -f sweep

rm -rf "$output"
mkdir -p "$output"
# Each shard is its own process with one thread, as one cluster task would be.
seq "$shards" | xargs -P "$shards" -I{} bash -c \
  'sweep -j 1 --shard {}/"$shards" --output "$output/shard-{}" > "$output/shard-{}.log"'
"$infersim" merge --output "$output/merged" "$output"/shard-*/
sweep -j 2 --output "$output/whole" > "$output/whole.log"

rows=$(($(wc -l < "$output/whole/sweep.csv") - 1))
if [ "$rows" -ne 48 ]; then
  echo "the unsharded sweep.csv holds $rows rows, not the 48 of 24 points by 2 modes" >&2
  exit 1
fi
if cmp "$output/merged/sweep.csv" "$output/whole/sweep.csv"; then
  echo "merged $shards shards: sweep.csv is byte for byte the unsharded sweep's ($rows rows)"
else
  echo "merged sweep.csv differs from the unsharded sweep's" >&2
  exit 1
fi
