#!/usr/bin/env bash
# Colocated or disaggregated prefill and decode (BATCHING.md section 12) on 8
# H100s (preset h100-llama-3.1-8b, least-requests routers) serving the
# Mooncake conversation hour: the 8 GPUs as 8 colocated replicas, and as every
# split of them into prefill and decode replicas (1:7 to 7:1). For each, in
# each mode of a compare run (the recorded hour; the retimed one, its requests
# at Poisson instants; the synthetic one, Poisson arrivals of mean-sized
# requests), DistServe's goodput: the requests meeting both a TTFT and a TPOT
# target, a second a GPU, with TTFT and TPOT p99. Then `capacity` searches the
# split itself: the cheapest prefill and decode counts whose recorded run
# meets the targets for 90 % of the requests. The runs are deterministic: the
# script checks every figure against the ones this model gives and exits 1
# when one differs.
#
#   examples/disaggregation/splits.sh [--infersim PATH] [--output DIR]
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/../.." && pwd)
infersim=$root/build/infersim
output=$root/examples/disaggregation/output
while [ $# -gt 0 ]; do
  case $1 in
    --infersim) infersim=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "splits.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$output"
trace=$root/trace/mooncake_conversation_trace.jsonl
gpus=8
goodput="ttft:2000 tpot:20"
common=(--trace "$trace" --goodput "$goodput" --plots none --force)
# Each request's figures for the two fleets the picture compares.
per_request() { case $1 in colocated|split6:2) ;; *) echo --per-request none ;; esac; }

# A fleet of P prefill and D decode replicas.
split_settings() {  # P D FILE
  cat > "$3" <<JSON
{"server": {"kind": "batching"},
 "batching": {"router": "least-requests", "decode_router": "least-requests",
  "fleet": [
   {"name": "prefill", "role": "prefill", "preset": "h100-llama-3.1-8b", "replicas": $1,
    "price_per_gpu_hour": 3},
   {"name": "decode", "role": "decode", "preset": "h100-llama-3.1-8b", "replicas": $2,
    "price_per_gpu_hour": 3}]}}
JSON
}

# summary.csv's rows: fleet, mode, good share, goodput a GPU, TTFT and TPOT p99.
rows() {  # NAME
  awk -F, -v fleet="$1" -v gpus="$gpus" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    { printf "%-10s %-9s %7.1f %%  %8.4f  %8.2f s  %7.1f ms\n", fleet, $1,
             100 * $col["good_request_fraction"], $col["goodput_rps"] / gpus,
             $col["ttft_p99_s"], 1000 * $col["tpot_p99_s"] }' "$output/$1/summary.csv"
}

table=$output/splits.txt
printf '%-10s %-9s %9s  %8s  %10s  %10s\n' fleet mode good "req/s/GPU" "TTFT p99" "TPOT p99" \
  > "$table"
"$infersim" run "${common[@]}" --preset h100-llama-3.1-8b --replicas "$gpus" \
  --router least-requests --output "$output/colocated" $(per_request colocated) > /dev/null
rows colocated >> "$table"
for prefill in $(seq 1 $((gpus - 1))); do
  name=split$prefill:$((gpus - prefill))
  split_settings "$prefill" $((gpus - prefill)) "$output/split$prefill.json"
  "$infersim" run "${common[@]}" --settings "$output/split$prefill.json" \
    --output "$output/$name" $(per_request "$name") > /dev/null
  rows "$name" >> "$table"
done
cat "$table"

# TTFT and TPOT of the recorded hour's requests, colocated against split 6:2:
# their distributions (the share of requests at or below a value), drawn by
# gnuplot when it is there.
for fleet in colocated split6:2; do
  for column in ttft_s tpot_s; do
    awk -F, -v want="$column" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == want) c = i; next }
      $c != "" { print $c }' "$output/$fleet/recorded/requests.csv" | sort -g |
      awk '{ v[NR] = $1 } END { step = NR > 600 ? int(NR / 600) : 1
             for (i = 1; i <= NR; i += step) print v[i], i / NR; print v[NR], 1 }' \
      > "$output/${fleet/:/_}_$column.dat"
  done
done
if command -v gnuplot > /dev/null; then
  (cd "$output" && gnuplot <<'PLOT'
set terminal svg size 900,360 font "sans,11"
set output "ttft_tpot.svg"
set multiplot layout 1,2 title "Mooncake hour, recorded, 8 H100s: colocated against 6 prefill + 2 decode"
set key bottom right
set grid
set ylabel "share of requests at or below"
set logscale x
set xlabel "TTFT (s)"
plot "colocated_ttft_s.dat" using 1:2 with lines lw 2 title "colocated 8", \
     "split6_2_ttft_s.dat" using 1:2 with lines lw 2 title "split 6:2"
set xlabel "TPOT (s)"
plot "colocated_tpot_s.dat" using 1:2 with lines lw 2 title "colocated 8", \
     "split6_2_tpot_s.dat" using 1:2 with lines lw 2 title "split 6:2"
unset multiplot
PLOT
  )
  echo "drawn: $output/ttft_tpot.svg"
fi

# The split searched: counts 1 to 6 a side, cost order, the recorded hour.
split_settings 1 1 "$output/search.json"
"$infersim" capacity --settings "$output/search.json" --trace "$trace" --modes recorded \
  --goodput "$goodput" --vary fleet --min 1 --max 6 --target "good_request_fraction>=0.9" \
  --plots none --force --output "$output/search" > "$output/search.txt"
answer=$(grep -o 'prefill=[0-9]* decode=[0-9]*[^(]*([0-9]* of [0-9]* fleets run' "$output/search.txt" | head -1)
echo "capacity: $answer"

expected=$(cat <<'TABLE'
fleet      mode           good  req/s/GPU    TTFT p99    TPOT p99
colocated  recorded     91.0 %    0.3860      4.16 s    103.5 ms
colocated  synthetic   100.0 %    0.4338      0.60 s      9.3 ms
colocated  retimed      95.6 %    0.4062      4.26 s     19.2 ms
split1:7   recorded      0.2 %    0.0007    963.61 s     38.0 ms
split1:7   synthetic     1.8 %    0.0072    368.38 s      7.3 ms
split1:7   retimed       0.1 %    0.0003    961.97 s     32.0 ms
split2:6   recorded     78.5 %    0.3328      8.33 s     30.6 ms
split2:6   synthetic   100.0 %    0.4338      1.03 s      7.8 ms
split2:6   retimed      80.7 %    0.3421      7.88 s     32.0 ms
split3:5   recorded     89.6 %    0.3799      5.80 s     28.6 ms
split3:5   synthetic   100.0 %    0.4338      0.64 s      8.1 ms
split3:5   retimed      92.4 %    0.3923      5.45 s     29.4 ms
split4:4   recorded     92.4 %    0.3920      5.19 s     29.4 ms
split4:4   synthetic   100.0 %    0.4338      0.51 s      8.6 ms
split4:4   retimed      94.6 %    0.4015      4.69 s     28.7 ms
split5:3   recorded     93.4 %    0.3960      4.86 s     29.4 ms
split5:3   synthetic   100.0 %    0.4338      0.35 s      9.6 ms
split5:3   retimed      95.0 %    0.4036      4.16 s     29.7 ms
split6:2   recorded     93.3 %    0.3959      4.58 s     33.7 ms
split6:2   synthetic   100.0 %    0.4337      0.35 s     12.0 ms
split6:2   retimed      94.6 %    0.4016      4.03 s     33.1 ms
split7:1   recorded     43.0 %    0.1822      4.55 s    631.9 ms
split7:1   synthetic    76.0 %    0.3295      0.35 s     27.3 ms
split7:1   retimed      42.9 %    0.1819      4.03 s   2487.1 ms
TABLE
)
expected_answer='prefill=4 decode=2  $18.00 an hour, usd_per_million_tokens=0.119075  good_request_fraction=0.917713  (14 of 36 fleets run'
if [ "$(cat "$table")" != "$expected" ] || [ "$answer" != "$expected_answer" ]; then
  echo "splits.sh: the figures differ from the ones this model gives:" >&2
  diff <(echo "$expected") "$table" >&2 || true
  [ "$answer" = "$expected_answer" ] || echo "capacity: expected '$expected_answer'" >&2
  exit 1
fi
echo "splits.sh: every figure as expected"
