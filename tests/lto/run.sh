#!/usr/bin/env bash
# The library and the program built with link-time optimisation and One
# Definition Rule violations as errors (INFERSIM_LTO): two different types of
# one name in the project fail this build, where an ordinary one links
# whichever it meets first. CTest runs it as the test `lto_build` (label lto).
#   tests/lto/run.sh [BUILD_DIR]    (build-lto)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-lto}
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
mkdir -p "$build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DINFERSIM_LTO=ON \
  -DINFERSIM_TESTS=OFF -DINFERSIM_WERROR=$werror > "$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j2 --target infersim > "$build/build.log" 2>&1 ||
  { grep -E "error|violates|warning" "$build/build.log" | head -40; exit 1; }
echo "lto: $build/infersim linked with -flto -Werror=odr"
