#!/usr/bin/env bash
# The batching server calibrated on three real vLLM 0.19.0 runs and replayed
# against them request by request (README.md beside it): for
# each run, `calibrate --server batching --measured RUN --trace WORKLOAD`
# fits the step costs, then `run --measured RUN --settings FIT` prints the
# table of TTFT, TPOT and latency (measured, infersim, diff %, LLMServingSim).
# Prints each run's fitted coefficients and key figures and checks them
# against the ones this model gives (the fit and the replay are
# deterministic: any change of a figure is a change of the model, and the
# script exits 1).
#
#   examples/validate_vllm/validate.sh [--infersim PATH] [--output DIR]
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
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "validate.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$output"
measured=$root/trace/measured
if [ ! -f "$measured/RTXPRO6000-Llama-3.1-8B/requests.jsonl" ]; then
  echo "validate.sh: the measured runs are missing; run trace/measured/fetch" >&2
  exit 1
fi

runs=(RTXPRO6000-Llama-3.1-8B RTXPRO6000-Qwen3-32B RTXPRO6000-Qwen3-30B-A3B-Instruct-2507)
declare -A workload=(
  [RTXPRO6000-Llama-3.1-8B]=sharegpt-llama-3.1-8b-300-sps10.jsonl
  [RTXPRO6000-Qwen3-32B]=sharegpt-qwen3-32b-300-sps10.jsonl
  [RTXPRO6000-Qwen3-30B-A3B-Instruct-2507]=sharegpt-qwen3-30b-a3b-300-sps10.jsonl
)

# The figures of one run: the fitted coefficients (from the settings file) and
# the table's diff % and tick lines (from run --measured's output).
figures() { # run fit.json run.txt
  awk -v run="$1" '
    FNR == 1 { file++ }
    file == 1 && /"step_(base|prefill_token|prefill_pair|decode_token|decode_context)_s"/ {
      gsub(/[",]/, ""); split($0, kv, ": "); gsub(/ /, "", kv[1]); coef[kv[1]] = kv[2] + 0 }
    file == 2 && /^(TTFT|TPOT|Latency) / { diff[$1 " " $2] = $5 }
    file == 2 && /^ticks of timeseries.csv/ {
      match($0, /running difference\| [0-9.]+/); running = substr($0, RSTART + 20, RLENGTH - 20)
      match($0, /waiting difference\| [0-9.]+/); waiting = substr($0, RSTART + 20, RLENGTH - 20) }
    END {
      printf "%s\n", run
      printf "  c0 %.3g s  cp %.3g s  cq %.3g s  cd %.3g s  ckv %.3g s\n", coef["step_base_s"],
             coef["step_prefill_token_s"], coef["step_prefill_pair_s"],
             coef["step_decode_token_s"], coef["step_decode_context_s"]
      n = split("TTFT TPOT Latency", m, " ")
      for (i = 1; i <= n; i++)
        printf "  %-7s mean %6s  median %6s  p90 %6s  p95 %6s  p99 %6s\n", m[i], diff[m[i] " Mean"],
               diff[m[i] " Median"], diff[m[i] " P90"], diff[m[i] " P95"], diff[m[i] " P99"]
      printf "  running off by %s, waiting by %s requests a tick on average\n", running, waiting
    }' "$2" "$3"
}

table=$output/validate.txt
: > "$table"
for run in "${runs[@]}"; do
  trace=$measured/workloads/${workload[$run]}
  "$infersim" calibrate --server batching --measured "$measured/$run" --trace "$trace" \
    --output "$output/$run.json" --force > "$output/$run.calibrate.txt"
  "$infersim" run --server batching --settings "$output/$run.json" --trace "$trace" \
    --measured "$measured/$run" --per-request none --plots none --output "$output/$run" \
    --force > "$output/$run.txt"
  figures "$run" "$output/$run.json" "$output/$run.txt" >> "$table"
done
cat "$table"

expected=$(cat <<'TABLE'
RTXPRO6000-Llama-3.1-8B
  c0 0.0127 s  cp 4.35e-05 s  cq 0 s  cd 0 s  ckv 1.09e-07 s
  TTFT    mean  +0.1%  median  +1.1%  p90  +0.4%  p95  -0.1%  p99  -0.3%
  TPOT    mean  +0.2%  median  +0.5%  p90  +0.3%  p95  +0.1%  p99  +0.1%
  Latency mean  +0.2%  median  +0.1%  p90  -0.1%  p95  +0.2%  p99  +0.4%
  running off by 0.39, waiting by 0.21 requests a tick on average
RTXPRO6000-Qwen3-32B
  c0 0.0242 s  cp 0.000157 s  cq 1.76e-08 s  cd 0 s  ckv 2.64e-07 s
  TTFT    mean  +0.3%  median  +1.5%  p90  +0.1%  p95  -0.1%  p99  -0.1%
  TPOT    mean  +0.1%  median  +0.3%  p90  -0.5%  p95  -1.0%  p99  -0.4%
  Latency mean  +0.2%  median  +0.2%  p90  +0.0%  p95  -0.1%  p99  -0.2%
  running off by 0.33, waiting by 0.80 requests a tick on average
RTXPRO6000-Qwen3-30B-A3B-Instruct-2507
  c0 0.0355 s  cp 3.19e-05 s  cq 0 s  cd 2.52e-10 s  ckv 5.79e-08 s
  TTFT    mean  +1.8%  median  +9.5%  p90  +1.4%  p95  -1.2%  p99  -2.3%
  TPOT    mean  +0.4%  median  -0.4%  p90  -4.2%  p95  -4.6%  p99  -5.1%
  Latency mean  +0.7%  median  +0.8%  p90  +0.5%  p95  +0.5%  p99  +6.2%
  running off by 4.18, waiting by 0.54 requests a tick on average
TABLE
)
if [ "$(cat "$table")" != "$expected" ]; then
  echo "validate.sh: the figures differ from the ones this model gives:" >&2
  diff <(echo "$expected") "$table" >&2 || true
  exit 1
fi
echo "validate.sh: every figure as expected"
