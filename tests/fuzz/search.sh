#!/usr/bin/env bash
# The fuzzers' open-ended search: each target of BUILD_DIR for SECONDS from a
# seed libFuzzer picks, so every run tries new inputs. Not part of the test
# suite or CI (a crash found by chance would fail an unrelated change): run it
# by hand or as `cmake --build BUILD_DIR --target fuzz_search`, and keep what
# it finds under tests/fuzz/regressions/<target>/ with the fix. Exit status 1
# when it finds a crash.
#   tests/fuzz/search.sh BUILD_DIR [SECONDS]    (60)
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 BUILD_DIR [SECONDS]" >&2
  exit 2
fi
exec "$(dirname "$0")/run_fuzzers.sh" "$1" --seconds "${2:-60}"
