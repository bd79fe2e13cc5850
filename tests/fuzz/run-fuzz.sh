#!/usr/bin/env bash
# run-fuzz.sh BINARY TARGET SOURCE_DIR BUILD_DIR — one fuzz target's CTest run: replay every
# regression input of regressions/TARGET (each a crash found once, fixed since), then fuzz for
# $STRAIT_FUZZ_SECONDS (default 30) from the seed corpus, and say how many inputs ran and what
# was found. A crash, a leak, a sanitizer report or a timeout (10 s per input) fails the test
# and leaves the input in BUILD_DIR/artifacts/: copy it to regressions/TARGET once it is fixed.
set -u
bin=$1 target=$2 src=$3 build=$4
secs=${STRAIT_FUZZ_SECONDS:-30}
reg=$src/tests/fuzz/regressions/$target
work=$build/corpus/$target
art=$build/artifacts/$target
mkdir -p "$work" "$art"
seeds=("$src/tests/fuzz/seeds/$target")
case $target in
  config) seeds+=("$src/configs") ;;
  csv) seeds+=("$src/tests/fuzz/seeds/csv") ;;
esac
opts=(-rss_limit_mb=2048 -timeout=10 -max_len=65536 -artifact_prefix="$art/")
mapfile -t inputs < <(find "$reg" -type f ! -name README | sort)
if [ ${#inputs[@]} -gt 0 ]; then
  n=${#inputs[@]}
  "$bin" "${opts[@]}" "${inputs[@]}" >"$build/$target-regressions.log" 2>&1 ||
    { tail -40 "$build/$target-regressions.log"; echo "fuzz_$target: a regression input fails again"; exit 1; }
  echo "fuzz_$target: $n regression inputs replayed, all pass"
fi
existing=()
for d in "${seeds[@]}"; do [ -d "$d" ] && existing+=("$d"); done
log=$build/$target-fuzz.log
"$bin" "${opts[@]}" -max_total_time="$secs" -print_final_stats=1 "$work" "${existing[@]}" >"$log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
echo "fuzz_$target: ${runs:-?} inputs in ${secs} s, ${cov:-cov: ?}, corpus $(ls "$work" | wc -l) files, exit $rc"
if [ $rc -ne 0 ]; then
  grep -E "ERROR|SUMMARY|==[0-9]+==|Test unit written|runtime error" "$log" | head -20
  tail -30 "$log"
  echo "fuzz_$target: FOUND A PROBLEM (input in $art)"
  exit 1
fi
