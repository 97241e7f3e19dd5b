#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang + ASan + UBSan, own build tree),
# replays each target's seed corpus and crash regressions (-runs=0), then
# fuzzes each target SECONDS seconds with a fixed seed. Fails on any crash,
# leak, timeout or sanitizer report. Prints executions per target.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     (default 20 s, every target)
#   FUZZ_BUILD=dir  build tree (default build-fuzz)
#   FUZZ_JOBS=n     build jobs (default 2)
#   FUZZ_MERGE=1    after fuzzing, merge the inputs that add coverage into
#                   fuzz/corpus/<target>/ (libFuzzer -merge=1): how longer
#                   local runs' findings join the committed corpus
#
# New inputs found while fuzzing go to a scratch folder, not the committed
# corpus; copy a finding's reproducer into fuzz/regressions/<target>/ once fixed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-20}"
shift || true
build="${FUZZ_BUILD:-$here/build-fuzz}"
jobs="${FUZZ_JOBS:-2}"
cxx="${FUZZ_CXX:-$(command -v clang++-14 || command -v clang++)}"

cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" \
  -DPARASIM_FUZZ=ON -DPARASIM_BUILD_TESTS=OFF -DPARASIM_BUILD_BENCH=OFF -DPARASIM_WITH_CUDA=OFF \
  -DPARASIM_WITH_MPI=OFF ${FUZZ_CMAKE_ARGS:-} >/dev/null
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=($(cd "$here/fuzz" && ls fuzz_*.cc | sed 's/\.cc$//'))
fi
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
# Inputs are small: a config, a profile, a log excerpt. Any one over a
# second is a hang.
common=(-timeout=10 -rss_limit_mb=2048 -max_len=65536 -seed=1 -print_final_stats=1)

status=0
summary=""
for t in "${targets[@]}"; do
  exe="$build/fuzz/$t"
  seeds="$here/fuzz/corpus/$t"
  regressions="$here/fuzz/regressions/$t"
  mkdir -p "$scratch/$t"
  inputs=("$seeds")
  [ -d "$regressions" ] && inputs+=("$regressions")
  log="$scratch/$t.log"
  echo "== $t: replay"
  if ! "$exe" "${common[@]}" -runs=0 "${inputs[@]}" >"$log" 2>&1; then
    tail -40 "$log"; echo "FAIL $t: replay"; status=1; continue
  fi
  echo "== $t: fuzz ${seconds}s"
  if ! "$exe" "${common[@]}" -max_total_time="$seconds" -artifact_prefix="$scratch/$t-" \
      "$scratch/$t" "${inputs[@]}" >"$log" 2>&1; then
    tail -40 "$log"; echo "FAIL $t: finding kept in $(ls "$scratch/$t-"* 2>/dev/null | head -1)"
    mkdir -p "$here/fuzz/findings"; cp "$scratch/$t-"* "$here/fuzz/findings/" 2>/dev/null || true
    status=1; continue
  fi
  execs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)"
  if [ "${FUZZ_MERGE:-0}" = 1 ]; then
    before=$(ls "$seeds" | wc -l)
    "$exe" -merge=1 -timeout=10 -rss_limit_mb=2048 -max_len=65536 "$seeds" "$scratch/$t" >"$log.merge" 2>&1 ||
      { tail -20 "$log.merge"; echo "FAIL $t: merge"; status=1; }
    echo "   corpus: $before -> $(ls "$seeds" | wc -l) inputs"
  fi
  summary+="$(printf '%-24s %10s executions in %ss\n' "$t" "${execs:-?}" "$seconds")"$'\n'
done
echo
echo "executions per target:"
printf '%s' "$summary"
exit $status
