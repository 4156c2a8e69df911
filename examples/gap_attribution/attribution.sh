#!/usr/bin/env bash
# What the gap between recorded traffic and a Poisson benchmark is made of,
# for every bundled trace on both server models: each compare run's
# attribution of the TTFT p99 (summary.json's `attribution`): the ratio
# recorded / synthetic, its timing factor (recorded / retimed: the recorded
# requests at their own instants against Poisson ones) and its size-mix
# factor (retimed / synthetic: the recorded requests against the trace's mean
# sizes, at Poisson instants), and which is larger. Prints the table the
# README.md beside it gives and checks that each row's larger effect is the one it names
# (the runs are deterministic: a change of it is a change of the model).
#
#   examples/gap_attribution/attribution.sh [--infersim PATH] [--output DIR]
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/../.." && pwd)
infersim=$root/build/infersim
output=$root/examples/gap_attribution/output
while [ $# -gt 0 ]; do
  case $1 in
    --infersim) infersim=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "attribution.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$output"

# trace, server flags, the larger effect expected on the TTFT p99
runs=(
  "azure_llm_code_1h.csv|edge||timing"
  "azure_llm_conv_1h.csv|edge||neither"
  "mooncake_conversation_trace.jsonl|edge||neither"
  "mooncake_synthetic_trace.jsonl|edge||neither"
  "azure_llm_code_1h.csv|batching|--server batching --replicas 8 --router prefix|size mix"
  "azure_llm_conv_1h.csv|batching|--server batching --replicas 8 --router prefix|size mix"
  "mooncake_conversation_trace.jsonl|batching|--server batching --replicas 8 --router prefix|size mix"
  "mooncake_synthetic_trace.jsonl|batching|--server batching --replicas 8 --router prefix|size mix"
)
status=0
echo "| trace | server | TTFT p99 recorded / Poisson | timing | size mix | larger |"
echo "| --- | --- | ---: | ---: | ---: | --- |"
for run in "${runs[@]}"; do
  IFS='|' read -r trace server flags expected <<< "$run"
  folder=$output/${trace%%.*}-$server
  # shellcheck disable=SC2086
  "$infersim" run --trace "$root/trace/$trace" $flags --plots none --per-request none \
    --output "$folder" --force > "$folder.txt" 2>&1 || { cat "$folder.txt" >&2; exit 1; }
  row=$(awk '
    /"attribution"/ { inside = 1 }
    inside && /"ttft_p99_s"/ { ttft = 1 }
    ttft && /"ratio"/ { gsub(/[",]/, ""); ratio = $2 }
    ttft && /"timing":/ { gsub(/[",]/, ""); timing = $2 }
    ttft && /"size_mix"/ { gsub(/[",]/, ""); sizes = $2 }
    ttft && /"larger"/ { sub(/.*"larger": "/, ""); sub(/".*/, ""); larger = $0; ttft = 0 }
    END { printf "x%.2f|x%.2f|x%.2f|%s", ratio, timing, sizes, larger }' "$folder/summary.json")
  IFS='|' read -r ratio timing sizes larger <<< "$row"
  echo "| $trace | $server | $ratio | $timing | $sizes | $larger |"
  if [ "$larger" != "$expected" ]; then
    echo "attribution.sh: $trace on $server: the larger effect is '$larger', not '$expected'" >&2
    status=1
  fi
done
exit $status
