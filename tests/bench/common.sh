# What the benchmark scripts share; sourced, with $root and $build set.

# The median of the numbers on stdin, one a line.
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# The Azure code hour tiled end to end to N requests (build/tile_trace: each
# copy shifted by the trace's span plus one second), made once under
# build/bench-data; prints its path.
tiled_trace() {
  local n=$1 trace=$build/bench-data/azure_code_$1.csv
  mkdir -p "$build/bench-data"
  [ -f "$trace" ] || "$build/tile_trace" "$root/trace/azure_llm_code_1h.csv" "$n" "$trace" > /dev/null
  echo "$trace"
}

# Turns for a run of N requests, SHORT for the shortest (10^5 and fewer),
# then 7 from 10^6 and 5 from 10^7: more where a run is short, as the noise
# is a larger part of it.
turns_for() {
  local n=$1 short=$2
  if [ "$n" -ge 10000000 ]; then echo 5; elif [ "$n" -ge 1000000 ]; then echo 7; else echo "$short"; fi
}

# wall_s COMMAND...: wall seconds of one run, its output dropped.
wall_s() {
  local start end
  start=$(date +%s.%N)
  "$@" > /dev/null
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f\n", b - a }'
}
