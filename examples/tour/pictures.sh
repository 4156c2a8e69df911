#!/usr/bin/env bash
# The pictures of the README's tour, drawn by the commands the tour shows:
# the seed's hour against Poisson (its TTFT p99 a minute), the Mooncake hour
# on eight batching replicas with the prefix router (each replica's KV use and
# running requests), and the cores the seed's hour needs (each mode's
# success rate against the core count), and the frontier of 8 H100s, colocated
# and split 2:6, under a closed loop swept over its cap. Copies the four SVGs into the output
# folder and checks that each run wrote what the tour says it does.
#
#   examples/tour/pictures.sh [--infersim PATH] [--output DIR]
#
# Without --output the pictures replace the README's, in examples/tour/.
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/../.." && pwd)
infersim=$root/build/infersim
output=$root/examples/tour
while [ $# -gt 0 ]; do
  case $1 in
    --infersim) infersim=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "pictures.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$output"
runs=$(mktemp -d)
trap 'rm -rf "$runs"' EXIT

"$infersim" run --output "$runs/seed" > "$runs/seed.txt"
"$infersim" run --preset h100-llama-3.1-8b --trace "$root/trace/mooncake_conversation_trace.jsonl" \
  --replicas 8 --router prefix --output "$runs/mooncake" > "$runs/mooncake.txt"
"$infersim" capacity --target 'success_rate>=0.99' --vary cores --modes recorded,retimed,synthetic \
  --output "$runs/capacity" > "$runs/capacity.txt"
"$infersim" sweep \
  --vary "settings=$root/examples/frontier/colocated.json,$root/examples/frontier/split.json" \
  --vary max-concurrency=1,2,4,8,16,32,64,128,256,512 \
  --dataset-name random --random-input-len 1024 --random-output-len 128 --num-prompts 2000 \
  --output "$runs/frontier" > "$runs/frontier.txt"

status=0
check() { # file pattern what
  if ! grep -q -- "$2" "$1"; then
    echo "pictures.sh: $3 is missing from $1" >&2
    status=1
  fi
}
check "$runs/seed.txt" "^What the gap is made of" "the attribution of the gap"
check "$runs/seed.txt" "^Time to first token (TTFT), p99 .* timing (" "the TTFT p99's split"
check "$runs/mooncake.txt" "^Prefix cache hit rate" "the prefix cache's hit rate"
check "$runs/capacity.txt" "^retimed  *cores=" "the retimed mode's answer"
check "$runs/frontier/frontier.csv" "^settings=colocated,512,2838.5" "the colocated fleet's last point (2838 tokens a second a GPU)"
check "$runs/frontier/frontier.csv" "^settings=split,512,1289.9" "the split fleet's last point (1290 tokens a second a GPU)"

cp "$runs/seed/plots/ttft_p99.svg" "$output/seed_ttft_p99.svg"
cp "$runs/mooncake/plots/replicas_recorded.svg" "$output/mooncake_replicas.svg"
cp "$runs/capacity/plots/success_rate.svg" "$output/capacity_cores.svg"
cp "$runs/frontier/plots/frontier.svg" "$output/frontier.svg"
for f in seed_ttft_p99 mooncake_replicas capacity_cores frontier; do
  check "$output/$f.svg" "</svg>" "a whole SVG"
done
[ "$status" = 0 ] && echo "pictures.sh: four pictures in $output"
exit "$status"
