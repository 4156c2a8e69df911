#!/usr/bin/env bash
# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer,
# then the fuzzers: configures BUILD_DIR (clang++ when there is one, with the
# fuzz targets; else g++ without them), builds it on two cores, runs its ctest
# but for this label (so nothing recurses) and the slowest runs (below), runs the reporters' relay under
# ThreadSanitizer (with clang), and each fuzz target for RUNS inputs from a
# fixed seed (the same inputs every time: a crash fails the change that made
# it, never one that met it by chance; tests/fuzz/search.sh is the open-ended
# search). CTest runs it as the test `sanitized_suite` (label `sanitizer`).
#   tests/sanitize/run.sh [BUILD_DIR [RUNS]]    (build-asan, 10000)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-asan}
runs=${2:-10000}
started=$(date +%s)

fuzz=OFF
if command -v clang++ > /dev/null && command -v clang > /dev/null; then
  export CC=clang CXX=clang++
  fuzz=ON
  lines=-gline-tables-only
else
  export CC=gcc CXX=g++
  lines=-g1
fi
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
mkdir -p "$build"
# -O1 and line tables only, as the sanitizers' authors advise: a report still
# names its file and line, and the build is smaller than with -O2 -g.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG $lines" -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG $lines" \
  -DINFERSIM_SANITIZE=ON \
  -DINFERSIM_FUZZ=$fuzz -DINFERSIM_WERROR=$werror > "$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
echo "sanitize: building $build with $CXX (fuzz targets: $fuzz)"
cmake --build "$build" -j2 > "$build/build.log" 2>&1 || { tail -n 60 "$build/build.log"; exit 1; }
echo "sanitize: built in $(( $(date +%s) - started )) s"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Left out here, run by the plain build only: the examples (whole traces
# through the program, the scenario tests' paths at the largest size) and the
# runs of a million requests and more, the leave-one-out refits and the fit
# of the factors with the figures weighed (MeasuredValidation's tests run
# that loss under the sanitizers), the fit that recovers known step costs
# twice over (61 s here, the slowest; MeasuredCalibration's other fits run
# the same code under the sanitizers), and the routers' comparisons over the
# whole Mooncake hour (the naive implementation's random workloads run the
# same routers here), which repeat at scale what smaller tests of the same
# code cover. Under the sanitizers they took most of this suite's time.
slow='MillionRequest|LeavingOneRunOut|FitWeighsTheFiguresWhenAsked|MooncakeHour'
slow+='|RecoversKnownStepCostsFromASimulatedRun'
ctest --test-dir "$build" -j2 -LE 'sanitizer|example' -E "$slow" --output-on-failure
echo "sanitize: sanitized suite passed after $(( $(date +%s) - started )) s"

if [ "$fuzz" = ON ]; then
  "$root/tests/fuzz/run_fuzzers.sh" "$build" --runs "$runs" --seed 1
else
  echo "sanitize: no clang++, so no fuzzing"
fi
echo "sanitize: done in $(( $(date +%s) - started )) s"
