#!/usr/bin/env bash
# Runs each libFuzzer target of BUILD_DIR (configured with clang,
# -DINFERSIM_SANITIZE=ON -DINFERSIM_FUZZ=ON) from the seed corpus in
# tests/fuzz/corpus/<target>/ and the kept regressions, and fails when any
# target finds a crash; the crashing input is left in BUILD_DIR/fuzz/<target>/
# (keep it under regressions/<target>/ with the fix).
#
#   tests/fuzz/run_fuzzers.sh BUILD_DIR [--runs N] [--seed S]
#     The gate (the sanitized suite runs it): each target for exactly N inputs
#     (10000) from libFuzzer's seed S (1), the same inputs on every run, so a
#     change fails it only by what it changed.
#   tests/fuzz/run_fuzzers.sh BUILD_DIR --seconds T
#     The search (tests/fuzz/search.sh, target fuzz_search): each target for
#     T seconds from a seed of libFuzzer's own choosing; not a gate.
set -euo pipefail
usage() {
  echo "usage: $0 BUILD_DIR [--runs N] [--seed S] | BUILD_DIR --seconds T" >&2
  exit 2
}
[ $# -ge 1 ] || usage
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
shift
runs=10000
seed=1
seconds=
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || usage
  case $1 in
    --runs) runs=$2 ;;
    --seed) seed=$2 ;;
    --seconds) seconds=$2 ;;
    *) usage ;;
  esac
  shift 2
done
if [ -n "$seconds" ]; then
  budget=(-max_total_time="$seconds")
  what="in $seconds s"
else
  budget=(-runs="$runs" -seed="$seed")
  what="from seed $seed"
fi
targets=(azure_csv_fuzz mooncake_jsonl_fuzz generic_columns_fuzz settings_fuzz)

failed=()
for target in "${targets[@]}"; do
  binary=$build/$target
  if [ ! -x "$binary" ]; then
    echo "run_fuzzers: $binary is missing (configure with clang, -DINFERSIM_FUZZ=ON)" >&2
    exit 2
  fi
  work=$build/fuzz/$target
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/tmp"
  # The working corpus grows in the build folder; the seeds stay as committed.
  seeds=("$here/corpus/$target")
  [ -d "$here/regressions/$target" ] && seeds+=("$here/regressions/$target")
  status=0
  # The targets write each input to a file (the readers take paths): in the
  # target's own folder, not the machine's /tmp.
  TMPDIR=$work/tmp ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
    "$binary" "$work/corpus" "${seeds[@]}" "${budget[@]}" -max_len=4096 \
    -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/" \
    > "$work/log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
  crashes=$(find "$work" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  echo "$target: ${execs:-?} executions $what, $crashes crashing inputs, exit status $status"
  if [ "$status" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    failed+=("$target")
    tail -n 40 "$work/log"
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "run_fuzzers: crashes found by ${failed[*]}; inputs under $build/fuzz/" >&2
  exit 1
fi
