#!/usr/bin/env bash
# Whether a large single run's second thread (the reporters' relay, the
# percentiles, the parse) pays: `infersim run --recorded --per-request none
# --plots none` on the Azure code hour tiled to 10^5, 10^6 and 10^7 requests
# with -j 1 and with -j 2 on both CPUs, and with -j 2 pinned to one CPU
# (`taskset -c 0`: the default then finds one core and runs one thread), the
# three taking turns; medians of wall and process time (user + sys), every
# turn's wall seconds printed.
#
#   tests/bench/threads.sh [BUILD_DIR]     (sizes: INFERSIM_BENCH_SIZES)
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
sizes=${INFERSIM_BENCH_SIZES:-"100000 1000000 10000000"}
infersim=$build/infersim
[ -x "$infersim" ] && [ -x "$build/tile_trace" ] || { echo "threads.sh: build first (.ci/setup)" >&2; exit 2; }
command -v taskset > /dev/null || { echo "threads.sh: needs taskset (util-linux)" >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

. "$root/tests/bench/common.sh"

echo "threads of one run ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)): medians, wall and process seconds"
printf '%-10s %-22s %9s %9s   %s\n' requests way wall_s cpu_s "turns (wall)"
for n in $sizes; do
  trace=$(tiled_trace "$n")
  turns=$(turns_for "$n" 9)
  run=("$infersim" run --recorded --per-request none --plots none --trace "$trace"
       --output "$scratch/r" --force)
  ways=("-j 1" "-j 2" "taskset -c 0")
  for way in "${ways[@]}"; do : > "$scratch/$way.wall"; : > "$scratch/$way.cpu"; done
  "${run[@]}" > /dev/null  # untimed: the page cache holds the file
  for ((i = 0; i < turns; i++)); do
    for way in "${ways[@]}"; do
      case $way in
        taskset*) cmd=(taskset -c 0 "${run[@]}") ;;
        *) cmd=("${run[@]}" $way) ;;
      esac
      /usr/bin/time -f "%e %U %S" -o "$scratch/t" "${cmd[@]}" > /dev/null
      awk '{ print $1 }' "$scratch/t" >> "$scratch/$way.wall"
      awk '{ printf "%.2f\n", $2 + $3 }' "$scratch/t" >> "$scratch/$way.cpu"
    done
  done
  for way in "${ways[@]}"; do
    printf '%-10s %-22s %9s %9s   %s\n' "$n" "$way" "$(median < "$scratch/$way.wall")" \
      "$(median < "$scratch/$way.cpu")" "$(tr '\n' ' ' < "$scratch/$way.wall" | sed 's/ $//')"
  done
done
