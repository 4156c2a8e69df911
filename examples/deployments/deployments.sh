#!/usr/bin/env bash
# The measured vLLM deployments (trace/deployments/silicon_sample_vllm.csv,
# fetched by trace/deployments/fetch: 1,345 deployments, each a closed loop
# of C clients at fixed input and output lengths and its measured mean TTFT
# and TPOT) predicted row by row on the preset derived for each row's GPU,
# model and tensor parallelism, under the same load. Prints the error table
# (a row a GPU, model and number format; the rows bound by KV capacity apart)
# and why the other rows are not predicted, then the same with the step
# composed from the kernel tables, checks both against the figures this
# model gives and exits 1 when one differs.
#
#   examples/deployments/deployments.sh [--infersim PATH] [--output DIR]
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/../.." && pwd)
infersim=$root/build/infersim
output=$root/examples/deployments/output
while [ $# -gt 0 ]; do
  case $1 in
    --infersim) infersim=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "deployments.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$output"
rows=$root/trace/deployments/silicon_sample_vllm.csv
[ -f "$rows" ] || "$root/trace/deployments/fetch" > /dev/null

"$infersim" presets deployments --deployments "$rows" --write "$output/deployments.csv" \
  > "$output/deployments.txt"
cat "$output/deployments.txt"

fail=0
# Fails the script, showing how, when TEXT is not EXPECTED.
same_as() {  # WHAT EXPECTED TEXT
  if [ "$3" != "$2" ]; then
    echo "$1 differs from the figures this model gives:" >&2
    diff <(echo "$2") <(echo "$3") >&2 || true
    fail=1
  fi
}
expected=$(cat <<'TABLE'
Deployments: 1345 rows read, 1345 asked for, 279 predicted (a closed loop of each row's clients, vLLM's random dataset at its lengths, MODEL.md section 4b; the presets' step costs are the datasheet's, nothing fitted on a row). The measured output tok/s is C osl / (TTFT + (osl - 1) TPOT) of the measured means.
gpu      model           dtype  kv         rows  TTFT |err| med/p90, bias  TPOT |err| med/p90, bias  output tok/s med, bias
b200     llama-3.1-70b   fp8    fits         58   16.0   83.5    +30.2 %    6.4   19.4     -4.9 %    6.9     +5.2 %
b200     llama-3.1-70b   fp8    KV-bound      2  1859.5 3030.9  +1859.5 %   36.0   39.3     -4.2 %   17.4    -17.4 %
h100     llama-3.1-70b   fp8    fits         41  149.1  291.2   +152.7 %    6.7   11.7     -1.2 %    7.1     -0.1 %
h100     llama-3.1-70b   fp8    KV-bound      4   68.0  719.2   +286.8 %    7.2    8.7     +0.8 %   11.6    -10.9 %
h100     qwen3-32b       bf16   fits         86   35.1  135.9    +43.4 %    5.9   15.5     -0.4 %    5.8     -0.7 %
h100     qwen3-32b       bf16   KV-bound      4   16.1   40.2    -22.4 %    6.9   10.5     -0.6 %    6.1     +6.0 %
h100     qwen3-32b       fp8    fits          3  140.5  226.2   +123.9 %   64.5  115.2    +67.1 %   39.7    -34.6 %
h200     llama-3.1-70b   fp8    fits         56  131.4  267.0   +131.7 %    5.3   14.3     -1.2 %    5.8     -0.2 %
h200     llama-3.1-70b   fp8    KV-bound      4  1040.6 1466.9   +970.2 %   32.0   44.6     -9.7 %   14.9    -17.7 %
h200     llama-3.1-8b    fp8    fits         21   60.9  198.9    +75.5 %   73.8  204.6    +91.8 %   39.1    -39.7 %
  not predicted: 132 rows, GPU b300_sxm: not in settings/hardware/gpus.json
  not predicted: 17 rows, disaggregated (prefill and decode workers): not replayed yet
  not predicted: 413 rows, model MiniMaxAI/MiniMax-M2.5: not in settings/hardware/models.json
  not predicted: 51 rows, model Qwen/Qwen3-235B-A22B-FP8: not in settings/hardware/models.json
  not predicted: 165 rows, model moonshotai/Kimi-K2.5: not in settings/hardware/models.json
  not predicted: 228 rows, model openai/gpt-oss-120b: not in settings/hardware/models.json
  not predicted: 60 rows, precision fp4: the datasheet presets are BF16 or FP8
TABLE
)
same_as "the table" "$expected" "$(grep -v '^Rows:' "$output/deployments.txt")"
# The same rows with the step composed from the kernel tables (BATCHING.md
# section 5c; settings/presets/README.md reads it beside the datasheet's);
# the rows not predicted are the same.
"$infersim" presets deployments --deployments "$rows" --step-costs tables -j 2 \
  > "$output/deployments_tables.txt"
cat "$output/deployments_tables.txt"
expected_tables=$(cat <<'TABLE'
Deployments: 1345 rows read, 1345 asked for, 279 predicted (a closed loop of each row's clients, vLLM's random dataset at its lengths, MODEL.md section 4b; the presets' step costs are composed from the kernel tables, a step's fixed part 0 ms, nothing fitted on a row). The measured output tok/s is C osl / (TTFT + (osl - 1) TPOT) of the measured means.
gpu      model           dtype  kv         rows  TTFT |err| med/p90, bias  TPOT |err| med/p90, bias  output tok/s med, bias
b200     llama-3.1-70b   fp8    fits         58   75.5  303.8   +119.8 %   10.1   20.6     +5.2 %   10.4     -5.2 %
b200     llama-3.1-70b   fp8    KV-bound      2  2863.3 4603.0  +2863.3 %   25.1   36.3    +14.0 %   36.6    -36.6 %
h100     llama-3.1-70b   fp8    fits         41   91.3  206.4   +101.1 %   16.0   27.3    -17.8 %   18.5    +20.2 %
h100     llama-3.1-70b   fp8    KV-bound      4   49.2  621.0   +241.3 %   12.3   16.8    -11.5 %    2.1     +1.4 %
h100     qwen3-32b       bf16   fits         86   28.4   84.0    +11.7 %   21.1   34.0    -22.3 %   23.8    +27.8 %
h100     qwen3-32b       bf16   KV-bound      4   28.2   48.5    -33.3 %   13.9   23.1    -15.0 %   24.2    +24.0 %
h100     qwen3-32b       fp8    fits          3  162.3  233.9   +126.1 %   71.9  101.5    +60.2 %   42.4    -31.2 %
h200     llama-3.1-70b   fp8    fits         56   77.7  167.6    +77.7 %   10.2   19.5    -10.1 %    9.8    +10.2 %
h200     llama-3.1-70b   fp8    KV-bound      4  1042.5 1414.2   +948.6 %   32.0   44.5     -7.4 %   14.8    -19.2 %
h200     llama-3.1-8b    fp8    fits         21   39.6  184.4    +55.0 %   65.2  118.6    +70.7 %   34.8    -35.7 %
TABLE
)
same_as "the kernel tables' table" "$expected_tables" \
  "$(grep -v '^  not predicted' "$output/deployments_tables.txt")"
# Every row: a prediction above 0, its error as the columns say.
awk -F, 'NR == 1 { next }
  { if ($11 <= 0 || $14 <= 0) { printf "%s: a prediction of 0\n", $1; bad = 1 }
    e = 100 * ($11 - $10) / $10
    if (e - $12 > 1e-6 || $12 - e > 1e-6) { printf "%s: TTFT error %s, worked out %g\n", $1, $12, e; bad = 1 } }
  END { if (NR != 280) { printf "%d rows, not 279\n", NR - 1; bad = 1 }; exit bad }' \
  "$output/deployments.csv" >&2 || fail=1
exit $fail
