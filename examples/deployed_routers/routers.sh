#!/usr/bin/env bash
# Routers as they are deployed, on the Mooncake conversation hour: one fleet
# (settings/fleet_h100_autoscaled.json: H100 replicas of the Llama-3.1-8B
# preset, autoscaled from 2 to 12 at an assumed 3 $ a GPU-hour) behind each
# router in turn: round-robin, least-requests, llm-d's scorers reading the
# replicas exact, the same with the load scraped every 50 ms and KV events
# 100 ms late, with an approximate prefix index, Dynamo's cost, and the
# scorers with the predicted TTFT. Prints the TTFT p99, the deadlines met,
# the prefix hit rate, the load imbalance, the hits the router expected over
# those found, and the bill, and checks them against the figures this model
# gives (the runs are deterministic: a changed figure is a changed model, and
# the script exits 1).
#
#   examples/deployed_routers/routers.sh [--infersim PATH] [--output DIR]
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/../.." && pwd)
infersim=$root/build/infersim
output=$root/examples/deployed_routers/output
while [ $# -gt 0 ]; do
  case $1 in
    --infersim) infersim=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "routers.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$output"
trace=$root/trace/mooncake_conversation_trace.jsonl

# A router's row of summary.json, to the digits shown; "-" where the router
# expects no hit.
row() {  # NAME
  awk -v name="$1" '
    function field(key) { if (match(text, "\"" key "\": *[^,}]+")) {
                            v = substr(text, RSTART, RLENGTH); sub(/.*: */, "", v); return v }
                          return "null" }
    { text = text $0 }
    END { p = field("router_hit_tokens_predicted"); a = field("router_hit_tokens_actual")
          expected = p == "null" ? "-" : sprintf("%+.1f %%", 100 * (p / a - 1))
          printf "%-22s %6.2f s %7.2f %% %6.1f %% %6.2f %9s %8.2f $\n", name,
                 field("ttft_p99_s"), 100 * field("success_rate"), 100 * field("prefix_hit_rate"),
                 field("load_imbalance"), expected, field("cost_usd") }' "$output/$1/summary.json"
}

run() {  # NAME FLAGS...
  local name=$1; shift
  "$infersim" run --settings "$root/settings/fleet_h100_autoscaled.json" --recorded \
    --trace "$trace" "$@" --per-request none --plots none --output "$output/$name" \
    --force > /dev/null
  row "$name" >> "$table"
}

table=$output/routers.txt
printf '%-22s %8s %9s %8s %6s %9s %10s\n' router "TTFT p99" "met" "hits" "imbal." \
  "expected" "bill" > "$table"
run round-robin --router round-robin
run least-requests --router least-requests
run scorer --router scorer --router-refresh-s 0
run scorer-scraped --router scorer --router-refresh-s 0.05 --kv-event-delay-s 0.1
run scorer-approximate --router scorer --router-refresh-s 0.05 --prefix-index approximate
run dynamo --router dynamo --router-refresh-s 0
run scorer-predicted-ttft --router scorer --router-refresh-s 0.05 \
  --scorer-weights queue:2,kv:2,prefix:3,predicted_ttft:4
cat "$table"

expected=$(cat <<'TABLE'
router                 TTFT p99       met     hits imbal.  expected       bill
round-robin              5.57 s   99.17 %    5.6 %   2.09         -    21.53 $
least-requests           5.14 s   99.30 %    5.5 %   1.70         -    20.23 $
scorer                   5.18 s   99.19 %   12.2 %   1.96    +1.8 %    22.64 $
scorer-scraped           5.14 s   99.12 %   11.5 %   1.91    +1.5 %    19.70 $
scorer-approximate       5.18 s   99.18 %   11.7 %   2.01   +11.8 %    22.63 $
dynamo                   4.99 s   99.28 %   10.1 %   2.05    +1.7 %    20.40 $
scorer-predicted-ttft    5.10 s   99.29 %   11.9 %   2.03    +1.5 %    23.07 $
TABLE
)
if [ "$(cat "$table")" != "$expected" ]; then
  echo "routers.sh: the figures differ from the ones this model gives:" >&2
  diff <(echo "$expected") "$table" >&2 || true
  exit 1
fi
echo "routers.sh: every figure as expected"
