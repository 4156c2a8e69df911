#!/usr/bin/env bash
# The cheapest fleet of two classes (settings/fleet_search_h100_l40s.json:
# H100 at 3 $ and L40S at 1 $ a GPU-hour, least-requests router), counts 1 to
# 16 each, on the Mooncake conversation hour, recorded and synthetic searched
# at once on the machine's cores; beside it, in the same turn, one run of the
# fleet the recorded search answers, the baseline its runs are made of.
# Wall time and process time (user + sys) of `infersim capacity --vary fleet`,
# medians of 3 turns, every turn printed, the runs each mode took, and the
# search's wall time over the single run's.
#
#   tests/bench/fleet_search.sh [BUILD_DIR]
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
infersim=$build/infersim
[ -x "$infersim" ] || { echo "fleet_search.sh: build first (.ci/setup)" >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
trace=$root/trace/mooncake_conversation_trace.jsonl
settings=$root/settings/fleet_search_h100_l40s.json
timed() { # label args...
  local label=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$scratch/time" "$infersim" "$@" --trace "$trace" \
    --plots none --force --output "$scratch/$label" > "$scratch/$label.out" 2> "$scratch/$label.err"
  awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }' "$scratch/time"
}
walls=() cpus=() singles=()
for turn in 1 2 3; do
  read -r wall cpu < <(timed search capacity --settings "$settings" --min 1 --max 16)
  # The recorded answer's fleet, run once.
  fleet=$(grep '^recorded' "$scratch/search.out" | awk '{ print $2, $3 }')
  h100=${fleet%% *}; h100=${h100#h100=}; l40s=${fleet##* }; l40s=${l40s#l40s=}
  python3 - "$settings" "$h100" "$l40s" > "$scratch/answer.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s.pop("capacity")
for c, n in zip(s["batching"]["fleet"], sys.argv[2:]):
    c["replicas"] = int(n)
json.dump(s, sys.stdout)
PY
  read -r single _ < <(timed single run --recorded --per-request none --settings "$scratch/answer.json")
  walls+=("$wall") cpus+=("$cpu") singles+=("$single")
  echo "turn $turn: search $wall s wall, $cpu s process; one run of h100=$h100 l40s=$l40s $single s wall"
done
grep -E '^(recorded|synthetic)' "$scratch/search.out"
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
mw=$(median "${walls[@]}")
mc=$(median "${cpus[@]}")
ms=$(median "${singles[@]}")
echo "median: search $mw s wall, $mc s process; one run $ms s wall; search/run $(awk -v a="$mw" -v b="$ms" 'BEGIN { printf "%.1f", a / b }')"
