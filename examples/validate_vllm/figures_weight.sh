#!/usr/bin/env bash
# The MoE run (Qwen3-30B-A3B, two ranks in lockstep) calibrated with the
# figures term at several weights (README.md beside it, "What is left"):
# `calibrate --figures-weight W` for W in 0.1, 0.25, 0.5, 1, 2 and 4, at the
# engine's turns with the five step costs and with the expert term, and as
# the arrivals come with the five. Prints a line a fit: the twelve headline
# figures' diff % (TTFT, TPOT, latency: mean, median, p90, p99; item 5's
# targets are 2 % a mean and 5 % the others) and the worst against its
# target, then a line a case naming the weights at which every target is met.
# Every figure is in sample. The fits are deterministic: the summary lines
# are checked against the ones this model gives, and the script exits 1 on
# any change.
#
#   examples/validate_vllm/figures_weight.sh [--infersim PATH] [--output DIR]
#
# The runs are fetched by trace/measured/fetch (.ci/setup runs it).
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/../.." && pwd)
infersim=$root/build/infersim
output=$root/examples/validate_vllm/output
while [ $# -gt 0 ]; do
  case $1 in
    --infersim) infersim=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "figures_weight.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$output"
measured=$root/trace/measured
run=$measured/RTXPRO6000-Qwen3-30B-A3B-Instruct-2507
if [ ! -f "$run/requests.jsonl" ]; then
  echo "figures_weight.sh: $run/requests.jsonl: missing (trace/measured/fetch fetches the runs)" >&2
  exit 2
fi
workload=$measured/workloads/sharegpt-qwen3-30b-a3b-300-sps10.jsonl

summary=""
# One case: its name, --replay-turns' value, then any other flags.
fit_case() {
  local name=$1 turns=$2 met="" missed="" w line metric statistic diff
  shift 2
  for w in 0.1 0.25 0.5 1 2 4; do
    line=$("$infersim" calibrate --server batching --measured "$run" --trace "$workload" \
      --replay-turns "$turns" "$@" --figures-weight "$w" \
      --output "$output/figures-weight-$w.json" --force |
      awk '
        /^(TTFT|TPOT|Latency) (Mean|Median|P90|P99) / {
          d = $5; sub("%", "", d); d += 0
          ratio = (d < 0 ? -d : d) / ($2 == "Mean" ? 2 : 5)
          if (ratio > worst) { worst = ratio; what = $1 " " $2 " " $5 }
          figures = figures sprintf(" %+.1f", d)
        }
        END { printf "%s %s |%s", (worst <= 1 ? "met" : "missed"), what, figures }')
    echo "$name, weight $w: $line"
    if [[ $line == met* ]]; then
      met="$met $w"
    else
      read -r _ metric statistic diff _ <<< "$line"
      missed="$missed $w ($metric $statistic $diff)"
    fi
  done
  summary+="$name: every target met at${met:- no weight}; missed at${missed:- no weight}"$'\n'
}
fit_case "turns on, five terms" on
fit_case "turns on, expert term" on --moe-experts 128 --moe-active-experts 8
fit_case "turns off, five terms" off
printf '\n%s' "$summary"

expected="turns on, five terms: every target met at 0.1 0.25 0.5 1 4; missed at 2 (TTFT P90 -5.1%)
turns on, expert term: every target met at 0.25 1 2; missed at 0.1 (TTFT Median +10.7%) 0.5 (TPOT Mean -2.1%) 4 (TTFT P90 +5.9%)
turns off, five terms: every target met at no weight; missed at 0.1 (TTFT Median +7.2%) 0.25 (TTFT Median +112.4%) 0.5 (TTFT Median +11.1%) 1 (TTFT Median +8.3%) 2 (TTFT Median +16.3%) 4 (TTFT Median +11.8%)
"
if [ "$summary" != "$expected" ]; then
  echo "figures_weight.sh: the summary differs from the one this model gives:" >&2
  diff <(printf '%s' "$expected") <(printf '%s' "$summary") >&2 || true
  exit 1
fi
echo "figures_weight.sh: the summary is the one this model gives"
