#!/usr/bin/env bash
# Replays the seed's example on the Azure code trace at the seed's one-second
# clock: the default scenario recorded against synthetic Poisson arrivals at the
# same mean rate, a looser decode budget, a cheaper generated token and the
# first ten minutes, then prints the seed's two tables.
#
#   examples/trace_replay/trace_replay.sh [--infersim PATH] [--output DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
infersim=$root/build/infersim
output=$root/examples/trace_replay/output
while [ $# -gt 0 ]; do
  case $1 in
    --infersim) infersim=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "trace_replay.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
trace=$root/trace/azure_llm_code_1h.csv
[ -f "$trace" ] || { echo "trace_replay.sh: $trace is missing; run trace/fetch" >&2; exit 2; }

run() {  # run NAME FLAGS...: one run folder per scenario
  local name=$1; shift
  "$infersim" run --trace "$trace" --time-resolution 1s --output "$output/$name" --force "$@"
}
run default --compare > "$output.default.txt"
run decode_budget_0.5 --recorded --decode-budget 0.5
run mi_per_generated_token_1000 --recorded --mi-per-generated-token 1000
run first_ten_minutes --recorded 50 600 42

# figure RUN KEY: one summary figure, read from the run's summary.csv by column name.
figure() {
  awk -F, -v key="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i }
                       NR == 2 { print $col[key] }' "$output/$1/summary.csv"
}

# The seed's first table, as infersim prints it for a compare run.
echo
sed -n '/^Metric/,/^Energy/p' "$output.default.txt"
rm -f "$output.default.txt"

echo
echo "Run                                     Edge CPU utilization  Average waiting time  Successful requests"
for pair in "default:recorded trace, default budget" "decode_budget_0.5:--decode-budget=0.5" \
            "mi_per_generated_token_1000:--mi-per-generated-token=1000"; do
  r=${pair%%:*}
  printf '%-39s %6.2f %%              %8.3f s            %.2f %% (%s)\n' "${pair#*:}" \
    "$(awk "BEGIN{print 100*$(figure "$r" utilization)}")" "$(figure "$r" avg_wait_s)" \
    "$(awk "BEGIN{print 100*$(figure "$r" success_rate)}")" "$(figure "$r" deadline_met)"
done
