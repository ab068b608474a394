#!/usr/bin/env bash
# bench/run-json.sh — TSJSON parse rate in MB/s: `touchsync-bench json` on a 1 MiB
# body of 100,000 keys, an array of 4,000 element-like objects and a string of escapes; pure CPU,
# no server. Pinned to CPU $LOAD_CPU; RUNS=5 for recorded numbers (median of each field).
# NO_BUILD=1 skips the release build.
source "$(dirname "$0")/lib.sh"
if [[ -z "${NO_BUILD:-}" ]]; then
  swift build -c release --scratch-path "$SCRATCH" --product touchsync-bench >&2
fi
mkdir -p "$BENCH_DATA"
out="$BENCH_DATA/json.out"
: >"$out"
for i in $(seq "$RUNS"); do
  taskset -c "$LOAD_CPU" "$BIN/touchsync-bench" json --rounds "${ROUNDS:-10}" | tee -a "$out"
done
echo "== json"
median_of "$out"
