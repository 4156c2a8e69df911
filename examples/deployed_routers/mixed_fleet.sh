#!/usr/bin/env bash
# Whether slower GPUs beside faster ones pay once the router knows their
# speed, on the Mooncake conversation hour: three H100 replicas and 0 to 3
# L40S ones (settings/fleet_search_h100_l40s.json's classes and prices, 3 $
# and 1 $ a GPU-hour), behind least-requests and behind llm-d's scorers with
# the predicted TTFT (each replica's own class's step cost), beside the four
# H100s that are the cheapest fleet meeting the file's target (TTFT p99 at
# most 6 s, 99 % of the deadlines met). Prints each fleet's bill an hour, its
# TTFT p99, the deadlines met and the share of the requests the L40S took,
# then what the requests that miss their deadline behind the scorer are, and
# checks every figure against the ones this model gives (exit 1 when one
# differs).
#
#   examples/deployed_routers/mixed_fleet.sh [--infersim PATH] [--output DIR]
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/../.." && pwd)
infersim=$root/build/infersim
output=$root/examples/deployed_routers/output
while [ $# -gt 0 ]; do
  case $1 in
    --infersim) infersim=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "mixed_fleet.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$output"
trace=$root/trace/mooncake_conversation_trace.jsonl
scorer=(--router scorer --router-refresh-s 0.05 --scorer-weights queue:2,kv:2,prefix:3,predicted_ttft:4)

# A fleet of H H100 and L L40S replicas (L 0: the H100 class alone).
fleet() {  # H L FILE
  {
    echo '{"server": {"kind": "batching"}, "batching": {"fleet": ['
    echo "{\"name\": \"h100\", \"preset\": \"h100-llama-3.1-8b\", \"price_per_gpu_hour\": 3.0, \"replicas\": $1}"
    [ "$2" -gt 0 ] && echo ", {\"name\": \"l40s\", \"preset\": \"l40s-llama-3.1-8b\", \"price_per_gpu_hour\": 1.0, \"replicas\": $2}"
    echo ']}}'
  } > "$3"
}

# A run's row: its bill an hour, TTFT p99, deadlines met, and the L40S's
# share of the routed requests (from summary.json's replicas).
row() {  # H L ROUTER DIR
  awk -v h="$1" -v l="$2" -v router="$3" '
    function field(key) { match(text, "\"" key "\": *[^,}]+"); v = substr(text, RSTART, RLENGTH)
                          sub(/.*: */, "", v); return v }
    { text = text $0 }
    END { all = 0; slow = 0; rest = text
          while (match(rest, /"class": *"[a-z0-9]+", *"routed": *[0-9]+/)) {
            one = substr(rest, RSTART, RLENGTH); rest = substr(rest, RSTART + RLENGTH)
            n = one; sub(/.*: */, "", n); all += n; if (one ~ /l40s/) slow += n }
          printf "%d H100 + %d L40S  %-15s %5.0f $ %7.2f s %8.2f %% %7.1f %%\n", h, l, router,
                 3 * h + l, field("ttft_p99_s"), 100 * field("success_rate"), 100 * slow / all }' \
    "$4/summary.json"
}

run() {  # H L ROUTER-NAME FLAGS...
  local h=$1 l=$2 name=$3; shift 3
  local dir=$output/h100_${h}_l40s_${l}_$name
  mkdir -p "$dir"
  fleet "$h" "$l" "$dir/fleet.json"
  "$infersim" run --settings "$dir/fleet.json" --recorded --trace "$trace" "$@" --plots none \
    --output "$dir/run" --force > /dev/null
  row "$h" "$l" "$name" "$dir/run" >> "$table"
}

table=$output/mixed_fleet.txt
printf '%-17s %-15s %7s %9s %10s %9s\n' fleet router "bill/h" "TTFT p99" met "to L40S" > "$table"
run 4 0 least-requests --router least-requests
for l in 0 1 2 3; do
  run 3 "$l" least-requests --router least-requests
  run 3 "$l" scorer "${scorer[@]}"
done
# Behind the scorer, three H100s and three L40S: the requests that miss
# their deadline against all, by prompt and by class.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  { n++; p[n] = $col["context_tokens"]; if ($col["deadline_met"] == 0) {
      m++; q[m] = $col["context_tokens"]; on[$col["replica_class"]]++ } }
  function median(a, k,   i, j, t) { for (i = 2; i <= k; i++) { t = a[i]
      for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
  END { printf "behind the scorer, 3 H100 + 3 L40S: %d of %d requests miss their deadline, %d of them on the H100s; their median prompt %.0f tokens against %.0f for all\n",
               m, n, on["h100"], median(q, m), median(p, n) }' \
  "$output/h100_3_l40s_3_scorer/run/requests.csv" >> "$table"
cat "$table"

expected=$(cat <<'TABLE'
fleet             router           bill/h  TTFT p99        met   to L40S
4 H100 + 0 L40S  least-requests     12 $    5.15 s    99.00 %     0.0 %
3 H100 + 0 L40S  least-requests      9 $    6.13 s    98.28 %     0.0 %
3 H100 + 0 L40S  scorer              9 $    6.04 s    98.10 %     0.0 %
3 H100 + 1 L40S  least-requests     10 $   21.36 s    96.83 %     7.2 %
3 H100 + 1 L40S  scorer             10 $    5.94 s    98.23 %     1.8 %
3 H100 + 2 L40S  least-requests     11 $   21.46 s    96.18 %    13.1 %
3 H100 + 2 L40S  scorer             11 $    5.84 s    98.39 %     4.2 %
3 H100 + 3 L40S  least-requests     12 $   12.83 s    97.36 %    20.1 %
3 H100 + 3 L40S  scorer             12 $    5.67 s    98.50 %     6.1 %
behind the scorer, 3 H100 + 3 L40S: 180 of 12031 requests miss their deadline, 173 of them on the H100s; their median prompt 20539 tokens against 6909 for all
TABLE
)
if [ "$(cat "$table")" != "$expected" ]; then
  echo "mixed_fleet.sh: the figures differ from the ones this model gives:" >&2
  diff <(echo "$expected") "$table" >&2 || true
  exit 1
fi
echo "mixed_fleet.sh: every figure as expected"
