#!/usr/bin/env bash
# The batching server's speed and memory, end to end, every figure beside a
# baseline timed in the same run (these machines are shared and noisy):
#   - the Mooncake conversation hour (12,031 requests, 145 M prompt tokens) on
#     8 replicas with the prefix router, and the Azure conversation hour
#     (19,366 requests) on one replica: `infersim run --server batching
#     --recorded --per-request none --plots none`, process time (user + sys)
#     and wall time, medians of 7 turns taken in turn with mawk counting the
#     fields of the same file read 60 times over (the file once takes mawk
#     less than /usr/bin/time's 10 ms step), and their ratio; every turn
#     printed;
#   - the server alone (build/batching_bench): scheduled request-steps a
#     second (the sum of batch sizes over the run's process time);
#   - the Mooncake hour on the H100 Llama-3.1-8B preset, its step costs the
#     datasheet's and the kernel tables' (section 5c), the same way;
#   - the Mooncake hour on 8 replicas behind the scorer router (llm-d's
#     default weights, then with the predicted TTFT) and the dynamo router,
#     their views refreshed every 50 ms, then the scorer with KV events 100
#     ms late and with an approximate prefix index, the same way;
#   - memory: peak RSS of the Mooncake hour tiled 1, 2 and 4 times (copies
#     one after the other in time), per request.
#
#   tests/bench/batching.sh [BUILD_DIR]
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
infersim=$build/infersim
[ -x "$infersim" ] && [ -x "$build/batching_bench" ] || { echo "batching.sh: build first (.ci/setup)" >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mawk_bin=$(command -v mawk || command -v awk)
mooncake=$root/trace/mooncake_conversation_trace.jsonl
conv=$root/trace/azure_llm_conv_1h.csv
turns=7
mawk_reads=60

# "user+sys wall" of one run, output discarded.
timed() {
  /usr/bin/time -f "%U %S %e" -o "$scratch/t" "$@" > /dev/null
  awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }' "$scratch/t"
}
. "$root/tests/bench/common.sh"

bench() {  # NAME TRACE RUN_ARGS...
  local name=$1 trace=$2; shift 2
  local run=("$infersim" run --server batching --recorded --per-request none --plots none
             --trace "$trace" --output "$scratch/run" --force "$@")
  "${run[@]}" > /dev/null  # once untimed: the page cache holds the file
  local copies=()
  for ((i = 0; i < mawk_reads; i++)); do copies+=("$trace"); done
  : > "$scratch/cpu"; : > "$scratch/wall"; : > "$scratch/awk"
  for ((i = 0; i < turns; i++)); do
    read -r cpu wall < <(timed "${run[@]}")
    echo "$cpu" >> "$scratch/cpu"; echo "$wall" >> "$scratch/wall"
    read -r acpu awall < <(timed "$mawk_bin" -F, '{ s += NF } END { print s }' "${copies[@]}")
    echo "$acpu" >> "$scratch/awk"
  done
  printf '%-34s process %6.3f s (turns: %s)  wall %6.3f s  mawk x%d process %6.3f s (turns: %s)  ratio %.2f\n' "$name" \
    "$(median < "$scratch/cpu")" "$(tr '\n' ' ' < "$scratch/cpu" | sed 's/ $//')" \
    "$(median < "$scratch/wall")" "$mawk_reads" "$(median < "$scratch/awk")" \
    "$(tr '\n' ' ' < "$scratch/awk" | sed 's/ $//')" \
    "$(awk -v a="$(median < "$scratch/cpu")" -v b="$(median < "$scratch/awk")" 'BEGIN { print (b > 0 ? a / b : 0) }')"
  echo "$(median < "$scratch/cpu")" > "$scratch/$name.median"
}

echo "batching server, end to end ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
bench mooncake_8_replicas_prefix "$mooncake" --replicas 8 --router prefix
bench azure_conv_1_replica "$conv"
# The same hour on the H100 Llama-3.1-8B preset, its step costs the
# datasheet's and then composed from the kernel tables (BATCHING.md
# section 5c): what reading the tables a step costs.
"$infersim" presets derive --gpu h100 --model llama-3.1-8b --step-costs tables > "$scratch/tables.json"
bench mooncake_8_h100_datasheet "$mooncake" --replicas 8 --router prefix --preset h100-llama-3.1-8b
bench mooncake_8_h100_tables "$mooncake" --replicas 8 --router prefix --settings "$scratch/tables.json"
# The same hour behind the routers that read a view (BATCHING.md section 8):
# llm-d's default scorers, with the predicted TTFT too, and Dynamo's cost,
# each with its view refreshed every 50 ms.
bench mooncake_8_replicas_scorer "$mooncake" --replicas 8 --router scorer --router-refresh-s 0.05
bench mooncake_8_replicas_scorer_ttft "$mooncake" --replicas 8 --router scorer \
  --router-refresh-s 0.05 --scorer-weights queue:2,kv:2,prefix:3,predicted_ttft:2
bench mooncake_8_replicas_dynamo "$mooncake" --replicas 8 --router dynamo --router-refresh-s 0.05
# The scorer's prefix index as deployed: the replicas' KV events 100 ms late,
# then the router's own LRU of 31,250 identities a replica.
bench mooncake_8_scorer_events_late "$mooncake" --replicas 8 --router scorer \
  --router-refresh-s 0.05 --kv-event-delay-s 0.1
bench mooncake_8_scorer_approximate "$mooncake" --replicas 8 --router scorer \
  --router-refresh-s 0.05 --prefix-index approximate
moon=$(cat "$scratch/mooncake_8_replicas_prefix.median")
awk -v s="$moon" 'BEGIN { printf "target: the Mooncake hour under 0.5 s of process time: %s (%.3f s)\n",
                            s < 0.5 ? "met" : sprintf("missed by %.0f %%", 100 * (s / 0.5 - 1)), s }'
scorer=$(cat "$scratch/mooncake_8_replicas_scorer_ttft.median")
awk -v s="$scorer" 'BEGIN { printf "target: the hour with the scorer router under 1 s of process time: %s (%.3f s)\n",
                              s < 1 ? "met" : sprintf("missed by %.0f %%", 100 * (s - 1)), s }'

echo
echo "the server alone (batching_bench, best of 5 turns):"
"$build/batching_bench" "$mooncake" --replicas 8 --router prefix --turns 5 | tee "$scratch/bench"

echo
echo "memory, the Mooncake hour tiled (peak RSS / request):"
for copies in 1 2 4; do
  tiled=$scratch/mooncake_$copies.jsonl
  # Copy k shifted by k x (the hour's span + 1 s); hash ids as they are.
  awk -v copies="$copies" '{ line[NR] = $0; match($0, /"timestamp": *[0-9]+/);
                             t = substr($0, RSTART, RLENGTH); sub(/.*: */, "", t); ts[NR] = t + 0;
                             if (ts[NR] > last) last = ts[NR] }
    END { for (k = 0; k < copies; k++) for (i = 1; i <= NR; i++) {
            l = line[i]; sub(/"timestamp": *[0-9]+/, "\"timestamp\": " (ts[i] + k * (last + 1000)), l);
            print l } }' "$mooncake" > "$tiled"
  n=$(wc -l < "$tiled")
  /usr/bin/time -f "%M" -o "$scratch/rss" "$infersim" run --server batching --recorded \
    --per-request none --plots none --trace "$tiled" --output "$scratch/run" --force \
    --replicas 8 --router prefix > /dev/null
  awk -v n="$n" -v copies="$copies" '{ printf "  %d copies, %6d requests: peak %7.1f MB, %8.0f bytes a request\n",
                                        copies, n, $1 / 1024, $1 * 1024 / n }' "$scratch/rss"
done
