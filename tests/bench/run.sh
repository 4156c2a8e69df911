#!/usr/bin/env bash
# The speed and memory benchmarks, every figure beside a baseline timed in the
# same run (these machines are shared and noisy):
#   - end to end, `infersim run --recorded --per-request none` on the Azure code
#     trace tiled to 10^5, 10^6 and 10^7 requests, against mawk summing two
#     columns of the same file;
#   - the same with requests.csv written, in rows per second;
#   - peak memory per request (/usr/bin/time -v);
#   - the event engine alone (Google Benchmark, hold model) in events per second.
#
#   tests/bench/run.sh [BUILD_DIR]     (default build; sizes: INFERSIM_BENCH_SIZES)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
sizes=${INFERSIM_BENCH_SIZES:-"100000 1000000 10000000"}
infersim=$build/infersim
[ -x "$infersim" ] && [ -x "$build/tile_trace" ] || { echo "run.sh: build first (.ci/setup)" >&2; exit 2; }
data=$build/bench-data
mkdir -p "$data"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mawk_bin=$(command -v mawk || command -v awk)

now_ns() { date +%s%N; }
# seconds COMMAND...: wall seconds of one run, output discarded
seconds() {
  local start end
  start=$(now_ns)
  "$@" > /dev/null
  end=$(now_ns)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f\n", (b - a) / 1e9 }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# median_of N COMMAND...
median_of() {
  local n=$1; shift
  for _ in $(seq "$n"); do seconds "$@"; done | median
}

printf '%-10s %12s %12s %8s %14s %14s %10s\n' requests infersim_s mawk_s ratio requests_per_s csv_rows_per_s bytes_per_req
declare -A ratio per_request_s
for n in $sizes; do
  trace=$data/azure_code_$n.csv
  [ -f "$trace" ] || "$build/tile_trace" "$root/trace/azure_llm_code_1h.csv" "$n" "$trace"
  runs=5
  [ "$n" -ge 10000000 ] && runs=3
  # warm the page cache once
  cat "$trace" > /dev/null
  t_run=$(median_of $runs "$infersim" run --recorded --per-request none --trace "$trace" --output "$scratch/r" --force)
  t_awk=$(median_of $runs "$mawk_bin" -F, 'NR>1{s+=$2+$3} END{print s}' "$trace")
  t_csv=$(median_of $runs "$infersim" run --recorded --per-request csv --trace "$trace" --output "$scratch/c" --force)
  rm -rf "$scratch/c"
  /usr/bin/time -v "$infersim" run --recorded --per-request none --trace "$trace" --output "$scratch/m" --force \
    > /dev/null 2> "$scratch/time.txt"
  peak_kb=$(awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 }' "$scratch/time.txt")
  ratio[$n]=$(awk -v a="$t_run" -v b="$t_awk" 'BEGIN { printf "%.2f", a / b }')
  per_request_s[$n]=$(awk -v a="$t_run" -v n="$n" 'BEGIN { printf "%.3e", a / n }')
  printf '%-10s %12s %12s %8s %14.0f %14.0f %10.0f\n' "$n" "$t_run" "$t_awk" "${ratio[$n]}" \
    "$(awk -v a="$t_run" -v n="$n" 'BEGIN { print n / a }')" \
    "$(awk -v a="$t_csv" -v b="$t_run" -v n="$n" 'BEGIN { d = a - b; print (d > 0 ? n / d : 0) }')" \
    "$(awk -v k="$peak_kb" -v n="$n" 'BEGIN { print k * 1024 / n }')"
done

echo
echo "Targets (medians):"
for n in $sizes; do
  case $n in
    1000000) echo "  10^6 summary-only within 2x mawk: ratio ${ratio[$n]} -> $(awk -v r="${ratio[$n]}" 'BEGIN { print (r <= 2 ? "met" : "missed by " sprintf("%.0f", (r / 2 - 1) * 100) " %") }')" ;;
  esac
done
first=$(echo "$sizes" | awk '{ print $1 }')
last=$(echo "$sizes" | awk '{ print $NF }')
if [ "$first" != "$last" ]; then
  echo "  per-request cost from $first to $last: ${per_request_s[$first]} s -> ${per_request_s[$last]} s," \
    "ratio $(awk -v a="${per_request_s[$last]}" -v b="${per_request_s[$first]}" 'BEGIN { printf "%.2f", a / b }') (target within 1.5)"
fi
echo "  csv_rows_per_s counts the extra time of writing requests.csv (target 2,000,000 or more);"
echo "  bytes_per_req is peak RSS over requests (target under 150 at 10^7); 10^7 end to end target: under 4 s."

if [ -x "$build/engine_bench" ]; then
  echo
  echo "Event engine, hold model (events per second; target 2e7 at queue size 10^3):"
  "$build/engine_bench" --benchmark_min_time=0.2 2>/dev/null |
    awk '/^Hold/ { for (i = 1; i <= NF; i++) if ($i ~ /events_per_s=/) { split($i, p, "="); print "  " $1, p[2] } }'
fi
