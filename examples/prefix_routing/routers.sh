#!/usr/bin/env bash
# What prefix caching and the router buy on the Mooncake conversation hour:
# the batching server (BATCHING.md) with 8 replicas, once a router, the
# recorded hour alone; prints each router's prefix hit rate, time to first
# token, end-to-end latency and deadlines met, and checks them against the
# figures this model gives (the run is deterministic: any change of a figure
# is a change of the model, and the script exits 1).
#
#   examples/prefix_routing/routers.sh [--infersim PATH] [--output DIR]
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/../.." && pwd)
infersim=$root/build/infersim
output=$root/examples/prefix_routing/output
while [ $# -gt 0 ]; do
  case $1 in
    --infersim) infersim=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "routers.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$output"
trace=$root/trace/mooncake_conversation_trace.jsonl

# One row of summary.csv's figures by column name, to the digits shown.
row() {
  awk -F, -v router="$1" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    { printf "%-15s %8.1f %%   %7.0f ms %7.0f ms %8.0f ms %8.1f s %8.2f %%\n", router,
             100 * $col["prefix_hit_rate"], 1000 * $col["ttft_mean_s"], 1000 * $col["ttft_p50_s"],
             1000 * $col["ttft_p99_s"], $col["e2el_p99_s"], 100 * $col["success_rate"] }' \
    "$output/$1/summary.csv"
}

table=$output/routers.txt
printf '%-15s %10s %10s %10s %11s %10s %10s\n' router "hit rate" "TTFT mean" "TTFT p50" \
  "TTFT p99" "E2E p99" "met" > "$table"
for router in round-robin least-requests kv-aware prefix; do
  "$infersim" run --server batching --recorded --trace "$trace" --replicas 8 --router "$router" \
    --per-request none --plots none --output "$output/$router" --force > /dev/null
  row "$router" >> "$table"
done
cat "$table"

expected=$(cat <<'TABLE'
router            hit rate  TTFT mean   TTFT p50    TTFT p99    E2E p99        met
round-robin          6.2 %       683 ms     240 ms     7992 ms     20.8 s    98.72 %
least-requests       6.2 %       567 ms     241 ms     6540 ms     17.0 s    99.16 %
kv-aware            14.6 %       551 ms     247 ms     5909 ms     15.6 s    99.14 %
prefix              17.0 %       550 ms     228 ms     6575 ms     16.1 s    99.19 %
TABLE
)
if [ "$(cat "$table")" != "$expected" ]; then
  echo "routers.sh: the figures differ from the ones this model gives:" >&2
  diff <(echo "$expected") "$table" >&2 || true
  exit 1
fi
echo "routers.sh: every figure as expected"
