#!/usr/bin/env bash
# Every output file of every bundled example and every README command, made by
# two builds and compared byte for byte: the check a redesign that must not
# change a figure passes before it lands.
#
#   tests/compare_builds.sh --before OLD/infersim --after NEW/infersim [--work DIR] [--only NAME]
#                           [--reuse-before]
#
# Each example script of examples/CMakeLists.txt runs once a build into
# DIR/run/NAME, kept as DIR/before/NAME and DIR/after/NAME (its own checks run
# too: a failing example fails the comparison); each `build/infersim ...`
# command of README.md runs with --output DIR/run/readme-N when it writes a
# folder. Both builds write to the same paths, so the files that name their
# folder agree. Set aside: the instant a file was written (written_at, a page's
# "written"), as <TIME>, and the lines that tell wall-clock time (a progress
# line, "runs/s", "in 0.68 s"), which come and go with the machine's speed. Every file of the two trees
# is compared, and each command's console. Run from the source tree; both binaries read its settings/
# and trace/ files. --reuse-before keeps DIR/before from an earlier comparison
# that completed (a redesign compared often against one baseline). Exit status
# 0 only when nothing differs.
set -euo pipefail
cd "$(dirname "$0")/.."

before="" after="" work="" only="" reuse=false
while [ $# -gt 0 ]; do
  case "$1" in
    --before) before=$(realpath "$2"); shift 2 ;;
    --after) after=$(realpath "$2"); shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --reuse-before) reuse=true; shift ;;
    *) echo "compare_builds: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$before" ] && [ -n "$after" ] || { echo "compare_builds: --before and --after name two infersim binaries" >&2; exit 2; }
for bin in "$before" "$after"; do
  [ -x "$bin" ] || { echo "compare_builds: $bin: not an executable" >&2; exit 2; }
done
[ -n "$work" ] || work=$(mktemp -d /tmp/compare_builds.XXXXXX)
mkdir -p "$work"
work=$(realpath "$work")

# The example scripts that take --infersim, from the list the suite runs.
examples=$(grep -oE '\$\{CMAKE_CURRENT_SOURCE_DIR\}/[a-z_]+/[a-z_]+\.sh' examples/CMakeLists.txt |
           sed 's|${CMAKE_CURRENT_SOURCE_DIR}/|examples/|' | sort -u |
           while read -r script; do grep -q -- '--infersim' "$script" && echo "$script"; done)

# The README's commands: each `build/infersim` line with its continuation lines
# joined, and the shell variables the block sets before it.
readme_commands() {
  awk '
    /^```sh/ { block = 1; vars = ""; next }
    /^```/ { block = 0; next }
    block && /^[a-z_]+=[^ ]+$/ { vars = vars $0 "; "; next }
    block && /build\/infersim/ { line = $0; sub(/^\.ci\/setup && /, "", line);
      while (line ~ /\\$/) { sub(/\\$/, "", line); getline next_line; line = line next_line }
      print vars line }
  ' README.md
}

run_side() {
  local side=$1 bin=$2 dir="$work/run"
  rm -rf "$dir" "$work/$side" "$work/$side.done" && mkdir -p "$dir"
  for script in $examples; do
    local name
    name=$(basename "$(dirname "$script")")-$(basename "$script" .sh)
    [ -z "$only" ] || [ "$only" = "$name" ] || continue
    echo "compare_builds: $side: $script" >&2
    if ! "$script" --infersim "$bin" --output "$dir/$name" > "$dir/$name.console" 2>&1; then
      echo "compare_builds: $side: $script failed (its console: $dir/$name.console)" >&2
      return 1
    fi
  done
  local n=0
  while IFS= read -r command; do
    n=$((n + 1))
    [ -z "$only" ] || [ "$only" = "readme-$n" ] || continue
    local sub out=""
    sub=$(sed -E 's|.*build/infersim +([a-z]+).*|\1|' <<< "$command")
    local help
    help=$("$bin" "$sub" --help 2>&1 || true)
    if grep -qE '^ +--output arg' <<< "$help"; then
      out=" --output $dir/readme-$n"
    fi
    echo "compare_builds: $side: readme-$n: $command" >&2
    if ! bash -c "${command//build\/infersim/$bin}$out" > "$dir/readme-$n.console" 2>&1; then
      echo "compare_builds: $side: readme-$n failed (its console: $dir/readme-$n.console)" >&2
      return 1
    fi
  done < <(readme_commands)
  # The consoles name the binary, which differs by side; every text file may
  # carry the instant it was written.
  find "$dir" -maxdepth 1 -name '*.console' -print0 | xargs -0 sed -i -e "s|$bin|<INFERSIM>|g"
  local clock='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z'
  local timing='runs/s|points/s|replays in [0-9.]+ s|at this rate|points in [0-9.]+ s'
  grep -rlIE "$clock|$timing" "$dir" | while read -r file; do
    sed -i -E -e "s/$clock/<TIME>/g" -e "\\%$timing% d" "$file"
  done
  mv "$dir" "$work/$side"
  touch "$work/$side.done"
}

if $reuse && [ -f "$work/before.done" ]; then
  echo "compare_builds: before: kept from $work/before" >&2
else
  rm -f "$work/before.done"
  run_side before "$before"
fi
run_side after "$after"
if diff -r "$work/before" "$work/after" > "$work/diff.txt"; then
  echo "compare_builds: identical: $(find "$work/before" -type f | wc -l) files ($work)"
else
  echo "compare_builds: the builds differ ($(grep -c '^diff\|^Only\|^Binary' "$work/diff.txt") files; $work/diff.txt):" >&2
  head -40 "$work/diff.txt" >&2
  exit 1
fi
