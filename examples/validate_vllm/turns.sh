#!/usr/bin/env bash
# How many of a vLLM run's queued_ts lie just after a token instant (any
# request's first_token_ts or last_token_ts): the engine stamps queued_ts at
# a turn of its loop, between steps, where tokens leave too (BATCHING.md
# section 10b). Prints "N of M queued_ts lie within W ms after a token
# instant". With --expect "N of M", exits 1 when the count is another.
#
#   examples/validate_vllm/turns.sh [--expect "N of M"] [RUN_DIR] [W_MS]
#     (trace/measured/RTXPRO6000-Qwen3-30B-A3B-Instruct-2507, 2)
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/../.." && pwd)
expect=""
if [ "${1:-}" = "--expect" ]; then
  [ $# -ge 2 ] || { echo "turns.sh: --expect takes \"N of M\"" >&2; exit 2; }
  expect=$2
  shift 2
fi
run=${1:-$root/trace/measured/RTXPRO6000-Qwen3-30B-A3B-Instruct-2507}
within=${2:-2}
[ -f "$run/requests.jsonl" ] || {
  echo "turns.sh: $run/requests.jsonl: missing (trace/measured/fetch fetches the runs)" >&2
  exit 2
}
# One line an instant: "seconds 0" for a queued_ts, "seconds 1" for a token
# instant; sorted by time, a queued_ts before a token instant of the same
# time (which is then not before it).
line=$(awk '
  function value(key,   at) {
    at = index($0, "\"" key "\": ")
    if (at == 0) { print "turns.sh: line " NR ": " key ": missing" > "/dev/stderr"; exit 2 }
    return substr($0, at + length(key) + 4) + 0
  }
  { printf "%.9f 0\n%.9f 1\n%.9f 1\n", value("queued_ts"), value("first_token_ts"),
      value("last_token_ts") }
' "$run/requests.jsonl" | sort -k1,1g -k2,2n | awk -v within="$within" '
  $2 == 1 { last = $1; seen = 1; next }
  { n += 1; if (seen && ($1 - last) * 1000 < within) near += 1 }
  END { printf "%d of %d queued_ts lie within %g ms after a token instant\n", near, n, within }
')
echo "$line"
if [ -n "$expect" ] && [ "${line%% queued_ts*}" != "$expect" ]; then
  echo "turns.sh: expected $expect queued_ts within $within ms, got ${line%% queued_ts*}" >&2
  exit 1
fi
