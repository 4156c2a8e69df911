#!/usr/bin/env bash
# Installs the build into a temporary prefix (cmake --install) and runs the
# installed program from another folder: its data (settings/, trace/ with
# fetch) is found under the prefix's share/infersim, and a missing trace names
# the places it was looked for. Usage: install_test.sh BUILD_DIR
set -euo pipefail

build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() {
  echo "install_test: $*" >&2
  exit 1
}

cmake --install "$build" --prefix "$prefix" > "$tmp/install.log" || fail "cmake --install failed"
for file in bin/infersim \
  share/infersim/settings/default.json share/infersim/settings/seed_1s_clock.json \
  share/infersim/settings/README.md \
  share/infersim/trace/fetch share/infersim/trace/SHA256SUMS share/infersim/trace/NOTICE.md \
  share/doc/infersim/README.md share/doc/infersim/NOTICE.md; do
  [[ -e $prefix/$file ]] || fail "$file is not installed"
done
[[ -x $prefix/share/infersim/trace/fetch ]] || fail "trace/fetch is not executable"
"$prefix/share/infersim/trace/fetch" --help > /dev/null || fail "the installed trace/fetch fails"
for file in fetch SHA256SUMS NOTICE.md; do
  [[ -e $prefix/share/infersim/trace/measured/$file ]] || fail "trace/measured/$file is not installed"
done
"$prefix/share/infersim/trace/measured/fetch" --help > /dev/null ||
  fail "the installed trace/measured/fetch fails"

# Files only the installed data folder holds, named as the program's own.
data=$prefix/share/infersim
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2024-01-01 00:00:00,10,1\n2024-01-01 00:00:02,20,2\n' \
  > "$data/trace/installed_only.csv"
printf '{"run": {"devices": 3}}\n' > "$data/settings/installed_only.json"
mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
"$prefix/bin/infersim" run --recorded --trace trace/installed_only.csv \
  --settings settings/installed_only.json --plots none --output out > out.console 2>&1 ||
  fail "the installed program failed from another folder: $(cat out.console)"
grep -q "Trace $data/trace/installed_only.csv: azure-csv, calendar timestamps, 2 requests." \
  out.console || fail "the trace was not read from $data/trace: $(cat out.console)"
grep -q '"devices": 3' out/settings.json || fail "settings/installed_only.json was not applied"

# A missing trace: every place looked in, and how to fetch the traces.
if "$prefix/bin/infersim" run --trace trace/not_fetched.csv --output missing 2> missing.err; then
  fail "a missing trace was not refused"
fi
for place in "$tmp/elsewhere/trace/not_fetched.csv" "$data/trace/not_fetched.csv" "trace/fetch"; do
  grep -qF "$place" missing.err || fail "the error does not name $place: $(cat missing.err)"
done
[[ ! -e missing ]] || fail "a refused run left a folder"
echo "install_test: ok ($prefix)"
