#!/usr/bin/env bash
# fuzz/run.sh [SECONDS] [TARGET...] — build the libFuzzer targets (fuzz/README.md) and run each for
# SECONDS (default 20) on its seed corpus in fuzz/corpus/<target>/, one after another.
#   TARGETS: json http websocket engineio socketio redis (default: all)
#   FUZZ_SCRATCH (.build-fuzz) the scratch path; FUZZ_CONFIG (release) debug|release;
#   FUZZ_WORK (.build-fuzz/work) where new corpus entries and crash artifacts go (the seed corpus in the
#   repo is read, never written); NO_BUILD=1 skips the build; FUZZ_JOBS=N runs N targets at once;
#   FUZZ_BUILD_JOBS=N compiles with N jobs (scripts/test: 1, as its build runs beside the Swift tests).
# Exit status: 0 when every target ran its time without a crash; 1 on a crash (artifact path printed);
# 77 when the toolchain has no libFuzzer runtime (the caller skips visibly).
set -uo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"; shift || true
targets=("$@"); [[ ${#targets[@]} -eq 0 ]] && targets=(json http websocket engineio socketio redis)
scratch="${FUZZ_SCRATCH:-.build-fuzz}"
config="${FUZZ_CONFIG:-release}"
work="${FUZZ_WORK:-$scratch/work}"

runtime="$(dirname "$(readlink -f "$(command -v swift)")")/../lib/swift/clang/lib/linux/libclang_rt.fuzzer-$(uname -m).a"
if [[ ! -f "$runtime" ]]; then
  echo "SKIP fuzzing: no libFuzzer runtime in this toolchain ($runtime missing)"
  exit 77
fi

fuzz_build() {  # [--product fuzz-X]
  # --sanitize=fuzzer makes SwiftPM link with libFuzzer's main; the combined -sanitize=fuzzer,address
  # after it is what instruments: SwiftPM's separate --sanitize flags reach swiftc in no fixed order,
  # and of several -sanitize options only the last counts (coverage or ASan, not both).
  TOUCHSYNC_FUZZ=1 swift build -c "$config" ${FUZZ_BUILD_JOBS:+-j "$FUZZ_BUILD_JOBS"} --scratch-path "$scratch" --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address \
    "$@" 2>&1 | grep -vE "ld.gold: warning: Cannot export local symbol" || true
}
if [[ -z "${NO_BUILD:-}" ]]; then
  if [[ ${#targets[@]} -eq 6 ]]; then
    # All six: one `swift build` (a fuzz build's package holds only the fuzz targets and their
    # dependencies, Package.swift), one plan and one link step each instead of six invocations.
    fuzz_build
  else
    for t in "${targets[@]}"; do fuzz_build --product "fuzz-$t"; done
  fi
  for t in "${targets[@]}"; do
    [[ -x "$scratch/$config/fuzz-$t" ]] || { echo "FAIL: fuzz-$t did not build"; exit 1; }
  done
fi

run_one() {
  local t="$1" dir="$work/$t"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  local log="$dir/last-run.log"
  # New inputs go to $dir/corpus; the repo's seeds are read only. -rss_limit_mb bounds memory per run.
  "$scratch/$config/fuzz-$t" "$dir/corpus" "fuzz/corpus/$t" -max_total_time="$seconds" -max_len=8192 \
    -rss_limit_mb=1024 -timeout=10 -print_final_stats=1 -artifact_prefix="$dir/artifacts/" >"$log" 2>&1
  local rc=$?
  local execs; execs=$(grep -E "^stat::number_of_executed_units" "$log" | awk '{print $2}')
  local cov; cov=$(grep -oE "cov: [0-9]+" "$log" | tail -1)
  if [[ $rc -eq 0 ]]; then
    echo "fuzz-$t: OK ${seconds}s, ${execs:-?} runs, ${cov:-cov: ?} (log $log)"
  else
    echo "fuzz-$t: CRASH (exit $rc), artifacts in $dir/artifacts/:"; ls "$dir/artifacts/" | sed 's/^/  /'
    grep -E "ERROR|Fatal error|fatal error|SUMMARY" "$log" | head -5 | sed 's/^/  /'
  fi
  return $rc
}

status=0
jobs="${FUZZ_JOBS:-1}"
pids=()
for t in "${targets[@]}"; do
  if [[ "$jobs" -gt 1 ]]; then
    while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do sleep 1; done
    run_one "$t" & pids+=($!)
  else
    run_one "$t" || status=1
  fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
