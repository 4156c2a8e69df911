#!/usr/bin/env bash
# Two builds of infersim timed in turn on the disaggregated Mooncake hour
# (the whole run of disaggregated.sh: settings/disaggregated_h100.json,
# --recorded --per-request none --plots none), so that both see the same
# host: each turn runs A then B, process time (user + sys) each. Prints every
# turn, then each build's median (least to most). The figures "in turn with
# the build before" of README.md come from it, with the build before built
# from its commit in a second tree.
#
#   tests/bench/in_turn.sh A_INFERSIM B_INFERSIM [TURNS]   (15 turns)
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 2 ] && [ -x "$1" ] && [ -x "$2" ] || {
  echo "in_turn.sh: give two infersim binaries (and the turns)" >&2
  exit 2
}
a=$1 b=$2 turns=${3:-15}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
whole() {  # BINARY LABEL: user + sys of one run, s
  /usr/bin/time -f "%U %S" -o "$scratch/t" "$1" run --recorded \
    --trace "$root/trace/mooncake_conversation_trace.jsonl" --per-request none --plots none \
    --force --output "$scratch/$2" --settings "$root/settings/disaggregated_h100.json" > /dev/null
  awk '{ printf "%.2f\n", $1 + $2 }' "$scratch/t"
}
ta=() tb=()
for turn in $(seq "$turns"); do
  ta+=("$(whole "$a" a)")
  tb+=("$(whole "$b" b)")
  echo "turn $turn: A ${ta[-1]} s, B ${tb[-1]} s"
done
stats() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%s (%s to %s)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
echo "A $a: $(stats "${ta[@]}") s"
echo "B $b: $(stats "${tb[@]}") s"
