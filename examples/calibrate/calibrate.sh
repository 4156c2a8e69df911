#!/usr/bin/env bash
# Calibrates the cost knobs from a benchmark and checks the replay against it,
# with the simulator itself as the benchmark: 200 requests a minute apart are
# "measured" with known knobs (20 MI per context token, 1500 per generated
# token), exported in aiperf's profile_export.jsonl shape, calibrated, and
# replayed with the calibrated settings and --measured. Exit status 1 when the
# knobs are not recovered to the digits printed or the replay misses the
# measurement.
#
#   examples/calibrate/calibrate.sh [--infersim PATH] [--output DIR]
set -euo pipefail
export LC_ALL=C  # decimal points in awk's printf as the figures below are written
root=$(cd "$(dirname "$0")/../.." && pwd)
infersim=$root/build/infersim
output=$root/examples/calibrate/output
while [ $# -gt 0 ]; do
  case $1 in
    --infersim) infersim=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "calibrate.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$output"

# The benchmark's requests: Mooncake JSONL, one a minute, sizes varied.
awk 'BEGIN { for (k = 0; k < 200; k++)
               printf "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": %d}\n",
                      k * 60000, 50 + (k * 137) % 3000, 1 + (k * 53) % 400 }' > "$output/requests.jsonl"

# The "server" it was measured on: known knobs, no network in between.
cat > "$output/known.json" <<'JSON'
{
  "run": {"mode": "recorded"},
  "tokens": {"mi_per_context_token": 20, "mi_per_generated_token": 1500},
  "server": {"mips_per_core": 60000},
  "network": {"hops": []}
}
JSON
"$infersim" run --settings "$output/known.json" --trace "$output/requests.jsonl" \
  --output "$output/benchmark" --force --plots none > /dev/null

# requests.csv in aiperf's per-request export shape (times in ms; the start on
# aiperf's wall clock, nanoseconds since the epoch: 2025-10-07 05:00:00 UTC here).
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
         { split($col["arrival_s"], t, ".")  # nine decimals: whole seconds and nanoseconds
           printf "{\"metadata\": {\"request_start_ns\": %d%s}, \"metrics\": {", 1759813200 + t[1], t[2]
           printf "\"input_sequence_length\": {\"value\": %d, \"unit\": \"tokens\"}, ", $col["context_tokens"]
           printf "\"output_sequence_length\": {\"value\": %d, \"unit\": \"tokens\"}, ", $col["generated_tokens"]
           printf "\"time_to_first_token\": {\"value\": %.9f, \"unit\": \"ms\"}, ", $col["ttft_s"] * 1000
           printf "\"request_latency\": {\"value\": %.9f, \"unit\": \"ms\"}}, \"error\": null}\n", $col["makespan_s"] * 1000 }' \
  "$output/benchmark/requests.csv" > "$output/profile_export.jsonl"

"$infersim" calibrate --from "$output/profile_export.jsonl" --output "$output/calibrated.json" \
  --force | tee "$output/calibrate.txt"
"$infersim" run --settings "$output/calibrated.json" --trace "$output/profile_export.jsonl" \
  --recorded --measured "$output/profile_export.jsonl" --output "$output/replay" --force \
  --plots none > "$output/replay.txt"

knob() { awk -v k="$1" '$1 == k { printf "%.2f", $2 }' "$output/calibrate.txt"; }
echo
echo "recovered: mi_per_context_token=$(knob mi_per_context_token)" \
  "mi_per_generated_token=$(knob mi_per_generated_token) (made with 20 and 1500)"
echo "replay against the measurement: $(grep -o 'ttft_mape=.* %' "$output/replay.txt")"

# The measured times are the simulator's own, to the nanosecond, so the fit is
# exact but for that rounding: each knob to the four decimals calibrate prints,
# with no standard error at those digits; no fixed overhead, so no hop; and a
# replay with the knobs errs by 0.0000 % on every request.
mismatches=()
expect_line() {  # expect_line FILE TEXT: a line of FILE holds TEXT
  grep -qF -- "$2" "$1" || mismatches+=("$(basename "$1"): no line with '$2'")
}
expect_line "$output/calibrate.txt" "200 requests"
expect_line "$output/calibrate.txt" "mi_per_context_token   20.0000 ± 0.0000"
expect_line "$output/calibrate.txt" "mi_per_generated_token 1500.0000 ± 0.0000"
expect_line "$output/calibrate.txt" "Mean concurrency: 1.000"
expect_line "$output/calibrated.json" '"hops": []'
expect_line "$output/replay.txt" "ttft_mape=0.0000 % e2e_mape=0.0000 %"
if [ ${#mismatches[@]} -gt 0 ]; then
  printf 'calibrate.sh: %s\n' "${mismatches[@]}" >&2
  exit 1
fi
