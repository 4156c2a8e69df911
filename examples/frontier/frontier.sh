#!/usr/bin/env bash
# The throughput-interactivity frontier as GPU vendors publish it: vLLM
# bench's random dataset (1024 tokens in, 128 out, 2000 prompts) sent by a
# closed loop of N clients (MODEL.md section 4b), N = 1, 2, 4, ..., 512, on
# 8 H100s (preset h100-llama-3.1-8b) colocated (colocated.json: 8 replicas,
# least-requests) and split into 2 prefill and 6 decode replicas
# (split.json, BATCHING.md section 12). One `infersim sweep --vary
# settings=colocated.json,split.json --vary max-concurrency=...` writes
# frontier.csv and plots/frontier.svg, a curve a fleet; the script prints
# the table. It checks what a closed loop must hold (never more than N in
# flight; at small N, N in flight on average; the Pareto marks) and every
# figure of the table against the ones this model gives, and exits 1 when
# one differs. Last, a closed loop of 64 clients and the README tour's
# closed loop beside the recorded Mooncake hour, their figures checked
# likewise.
#
#   examples/frontier/frontier.sh [--infersim PATH] [--output DIR]
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/../.." && pwd)
infersim=$root/build/infersim
output=$root/examples/frontier/output
while [ $# -gt 0 ]; do
  case $1 in
    --infersim) infersim=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "frontier.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$output"
here=$root/examples/frontier
"$infersim" sweep --vary "settings=$here/colocated.json,$here/split.json" \
  --vary max-concurrency=1,2,4,8,16,32,64,128,256,512 --dataset-name random \
  --random-input-len 1024 --random-output-len 128 --num-prompts 2000 \
  --output "$output/sweep" --force > "$output/sweep.log"
grep -h "^Ran" "$output/sweep.log"

fail=0
# One table: the fleet (the settings file's name), then frontier.csv's columns.
joined=$output/frontier.csv
sed -e '1s/^configuration,/fleet,/' -e '2,$s/^settings=//' "$output/sweep/frontier.csv" > "$joined"
for fleet in colocated split; do
  rows=$(grep -c "^$fleet," "$joined" || true)
  [ "$rows" -eq 10 ] || { echo "$fleet: frontier.csv holds $rows points, not 10" >&2; fail=1; }
done
# Never more than N in flight; at N up to 64, N in flight on average (the
# 2000 requests' last ones aside): within 5 %.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  { n = $c["max-concurrency"]; peak = $c["max_concurrent_requests"]; mean = $c["mean_in_flight"]
    if (peak > n) { printf "%s: %d in flight at N = %d\n", $c["settings"], peak, n; bad = 1 }
    if (n <= 64 && (mean < 0.95 * n || mean > n)) {
      printf "%s: %.3f in flight on average at N = %d\n", $c["settings"], mean, n; bad = 1 } }
  END { exit bad }' "$output/sweep/sweep.csv" >&2 || fail=1
# The Pareto marks, worked out again over every point of both fleets.
awk -F, 'NR == 1 { next } { gpu[NR] = $3; user[NR] = $4; mark[NR] = $11 }
  END { for (p in gpu) { on = "true"
          for (q in gpu) if (gpu[q] >= gpu[p] && user[q] >= user[p] &&
                             (gpu[q] > gpu[p] || user[q] > user[p])) on = "false"
          if (on != mark[p]) { printf "row %d: pareto %s, worked out %s\n", p, mark[p], on
                               bad = 1 } }
        exit bad }' "$joined" >&2 || fail=1

table=$output/frontier.txt
awk -F, 'NR == 1 { printf "%-9s %5s  %9s  %9s  %9s  %9s  %s\n", "fleet", "N", "tok/s/GPU",
                   "tok/s/user", "TTFT mean", "TPOT mean", "frontier"; next }
  { printf "%-9s %5d  %9.1f  %9.1f  %7.0f ms  %6.2f ms  %s\n", $1, $2, $3, $4, 1000 * $5,
           1000 * $7, $11 == "true" ? "*" : "" }' "$joined" > "$table"
cat "$table"

expected=$(cat <<'TABLE'
fleet         N  tok/s/GPU  tok/s/user  TTFT mean  TPOT mean  frontier
colocated     1       18.8      160.6       59 ms    6.23 ms  
colocated     2       37.6      160.6       59 ms    6.23 ms  
colocated     4       75.3      160.6       59 ms    6.23 ms  
colocated     8      150.6      160.6       59 ms    6.23 ms  *
colocated    16      290.3      158.9       82 ms    6.29 ms  *
colocated    32      537.8      155.5      128 ms    6.43 ms  *
colocated    64      937.4      149.2      220 ms    6.70 ms  *
colocated   128     1520.8      126.0      311 ms    7.94 ms  *
colocated   256     2202.9       96.8      507 ms   10.33 ms  *
colocated   512     2838.5       63.7      831 ms   15.70 ms  *
split         1       18.8      160.0       59 ms    6.25 ms  
split         2       37.5      160.0       59 ms    6.25 ms  
split         4       75.0      160.0       59 ms    6.25 ms  
split         8      148.1      158.0       60 ms    6.33 ms  
split        16      290.7      155.6       63 ms    6.42 ms  *
split        32      559.9      151.6       70 ms    6.59 ms  *
split        64     1022.7      144.4      107 ms    6.92 ms  *
split       128     1289.9      138.9      632 ms    7.20 ms  *
split       256     1289.9      138.9     2080 ms    7.20 ms  *
split       512     1289.9      138.9     4684 ms    7.20 ms  *
TABLE
)
if [ "$(cat "$table")" != "$expected" ]; then
  echo "the table differs from the figures this model gives:" >&2
  diff <(echo "$expected") "$table" >&2 || true
  fail=1
fi

# One closed loop of 64 clients, 64 warm-ups first: its result block's figures.
"$infersim" run --preset h100-llama-3.1-8b --max-concurrency 64 --num-warmups 64 \
  --dataset-name random --random-input-len 1024 --random-output-len 128 --num-prompts 2000 \
  --plots none --per-request none --output "$output/tour" --force > "$output/tour.log"
tour_expected=$(cat <<'LINES'
Maximum request concurrency:             64
Benchmark duration (s):                  89.86
Request throughput (req/s):              22.26
Output token throughput (tok/s):         2848.87
Mean requests in flight:                 63.35
Output tok/s per user (1/TPOT):          62.24
Output tok/s per GPU:                    2848.87
Mean TTFT (ms):                          805.80
Mean TPOT (ms):                          16.07
LINES
)
tour=$(grep -E "^(Maximum request|Benchmark duration|Request throughput \(|Output token throughput|Mean requests in flight|Output tok/s|Mean TTFT|Mean TPOT)" "$output/tour.log")
if [ "$tour" != "$tour_expected" ]; then
  echo "the closed loop of 64 clients differs:" >&2
  diff <(echo "$tour_expected") <(echo "$tour") >&2 || true
  fail=1
fi

# The README's tour: a closed loop beside the recorded Mooncake hour.
"$infersim" run --trace "$root/trace/mooncake_conversation_trace.jsonl" \
  --preset h100-llama-3.1-8b --replicas 8 --router least-requests --compare-closed-loop on \
  --plots none --per-request none --output "$output/beside" --force > "$output/beside.log"
beside_expected=$(cat <<'LINES'
What a closed loop hides    Recorded trace  Closed loop, 12 in flight  Synthetic poisson
Request throughput (req/s)  3.395 req/s     3.937 req/s                3.470 req/s
Peak concurrent requests    42              12                         28
TTFT, p99                   4.161 s         4.065 s                    603.1 ms
Wait, mean                  23.93 ms        11.32 ms                   11.80 ms
LINES
)
beside=$(awk '/^What a closed loop hides/ { on = 1 } /^A closed loop of/ { on = 0 } on' \
  "$output/beside.log" | grep -E "^(What a|Request throughput|Peak concurrent|TTFT, p99|Wait, mean)")
if [ "$beside" != "$beside_expected" ]; then
  echo "the README tour's closed loop beside the recorded hour differs:" >&2
  diff <(echo "$beside_expected") <(echo "$beside") >&2 || true
  fail=1
fi
[ -f "$output/beside/closed-loop/summary.json" ] || { echo "no closed-loop/summary.json" >&2; fail=1; }

# Both fleets on one picture: the sweep's own (gnuplot when it is there).
if [ -f "$output/sweep/plots/frontier.svg" ]; then
  cp "$output/sweep/plots/frontier.svg" "$output/frontier.svg"
  echo "picture: $output/frontier.svg"
elif [ "${CI:-}" = "true" ]; then
  echo "frontier.sh: no plots/frontier.svg (is gnuplot missing?)" >&2
  fail=1
fi
exit $fail
