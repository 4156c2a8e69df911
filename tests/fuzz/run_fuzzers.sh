#!/usr/bin/env bash
# Runs each libFuzzer target of BUILD_DIR (configured with clang,
# -DINFERSIM_SANITIZE=ON -DINFERSIM_FUZZ=ON) for SECONDS, starting from the
# seed corpus in tests/fuzz/corpus/<target>/ and the kept regressions. Fails
# when any target finds a crash; the crashing input is left in
# BUILD_DIR/fuzz/<target>/ (keep it under regressions/<target>/ with the fix).
#   tests/fuzz/run_fuzzers.sh build-asan 60
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
seconds=$2
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
  mkdir -p "$work/corpus"
  # The working corpus grows in the build folder; the seeds stay as committed.
  seeds=("$here/corpus/$target")
  [ -d "$here/regressions/$target" ] && seeds+=("$here/regressions/$target")
  status=0
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
    "$binary" "$work/corpus" "${seeds[@]}" -max_total_time="$seconds" -max_len=4096 \
    -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/" \
    > "$work/log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
  crashes=$(find "$work" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  echo "$target: ${execs:-?} executions in ${seconds} s, $crashes crashing inputs, exit status $status"
  if [ "$status" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    failed+=("$target")
    tail -n 40 "$work/log"
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "run_fuzzers: crashes found by ${failed[*]}; inputs under $build/fuzz/" >&2
  exit 1
fi
