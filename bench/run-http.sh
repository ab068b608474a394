#!/usr/bin/env bash
# bench/run-http.sh SCENARIO   — SCENARIO: health | toggle | my-rooms | interaction-state | element-create
# wrk (THREADS=2, CONNECTIONS=64, DURATION=10s) pinned to CPU $LOAD_CPU against $URL, RUNS (default 5)
# times; prints the median, spread (min–max) and every value of each field, with the load average
# at the end of each run, the date, commit and machine (summary also appended to
# $BENCH_DATA/summary.jsonl). Start the server first: bench/server.sh start. LABEL names the
# summary (default http-SCENARIO).
source "$(dirname "$0")/lib.sh"
scenario="${1:?usage: bench/run-http.sh health|toggle|my-rooms|interaction-state|element-create}"
script="bench/wrk/$scenario.lua"
[[ -f "$script" ]] || { echo "no such scenario: $scenario" >&2; exit 2; }
mkdir -p "$BENCH_DATA"
out="$BENCH_DATA/http-$scenario.out"
: >"$out"
bench_context
# The server's CPU time (user + system, all threads, from /proc/PID/stat) per answered request,
# when its pid is known (SERVER_PID, else $BENCH_DATA/server.pid): less sensitive than req/s to
# what else the machine runs. Added to the RESULT line as "server_cpu_us_per_req".
pid="${SERVER_PID:-$(cat "$BENCH_DATA/server.pid" 2>/dev/null || true)}"
cpu_ticks() { [[ -n "$pid" && -r /proc/$pid/stat ]] && awk '{print $14 + $15}' "/proc/$pid/stat" || echo ""; }
tck=$(getconf CLK_TCK)
for i in $(seq "$RUNS"); do
  t0=$(cpu_ticks)
  result=$(taskset -c "$LOAD_CPU" wrk -t"${THREADS:-2}" -c"${CONNECTIONS:-64}" -d"${DURATION:-10s}" --latency -s "$script" "$URL" | with_load)
  t1=$(cpu_ticks)
  if [[ -n "$t0" && -n "$t1" ]]; then
    result=$(python3 -c '
import json, sys
t0, t1, tck, text = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
out = []
for l in text.splitlines():
    if l.startswith("RESULT "):
        r = json.loads(l[7:])
        r["server_cpu_us_per_req"] = round((t1 - t0) * 1e6 / tck / max(r["requests"], 1), 1)
        l = "RESULT " + json.dumps(r)
    out.append(l)
print("\n".join(out))' "$t0" "$t1" "$tck" "$result")
  fi
  echo "$result" | tee -a "$out" | grep -E "RESULT|Non-2xx|Socket errors" || true
done
echo "== $scenario"
median_of "$out" "${LABEL:-http-$scenario}"
