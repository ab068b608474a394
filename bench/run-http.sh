#!/usr/bin/env bash
# bench/run-http.sh SCENARIO   — SCENARIO: health | toggle | my-rooms | interaction-state | element-create
# wrk (THREADS=2, CONNECTIONS=64, DURATION=10s) pinned to CPU $LOAD_CPU against $URL; RUNS=5 for
# recorded numbers (prints the median of each field). Start the server first: bench/server.sh start.
source "$(dirname "$0")/lib.sh"
scenario="${1:?usage: bench/run-http.sh health|toggle|my-rooms|interaction-state|element-create}"
script="bench/wrk/$scenario.lua"
[[ -f "$script" ]] || { echo "no such scenario: $scenario" >&2; exit 2; }
out="$BENCH_DATA/http-$scenario.out"
: >"$out"
for i in $(seq "$RUNS"); do
  taskset -c "$LOAD_CPU" wrk -t"${THREADS:-2}" -c"${CONNECTIONS:-64}" -d"${DURATION:-10s}" --latency -s "$script" "$URL" | tee -a "$out" | grep -E "RESULT|Requests/sec|Non-2xx|Socket errors" || true
done
echo "== $scenario"
median_of "$out"
