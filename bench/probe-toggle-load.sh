#!/usr/bin/env bash
# bench/probe-toggle-load.sh — what bounds the durable toggle UNDER LOAD.
# Against a running bench server (bench/server.sh start), one wrk toggle run (-t2 -c64, $DURATION)
# while it samples: group-commit batch sizes and commit time (/metrics deltas), the server's CPU
# (user/system) and context switches per toggle (/proc/PID/task/*/status), fsync/fdatasync count
# and latency (strace -f -T for $STRACE_SECONDS inside the run; strace slows what it traces, so its
# run's req/s is not a result) and, with PERF=1, a `perf record -g` profile (perf report in
# $BENCH_DATA/probe/).
#   bench/probe-toggle-load.sh            # metrics + CPU + context switches
#   STRACE=1 bench/probe-toggle-load.sh   # + fsync count and latency
#   PERF=1 bench/probe-toggle-load.sh     # + perf profile
source "$(dirname "$0")/lib.sh"
pid="${SERVER_PID:-$(cat "$BENCH_DATA/server.pid")}"
out="$BENCH_DATA/probe"; mkdir -p "$out"
DURATION="${DURATION:-10s}"
metric() { curl -s "$URL/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
ctx() { cat /proc/$pid/task/*/status | awk '/^voluntary_ctxt_switches/ {v+=$2} /^nonvoluntary_ctxt_switches/ {n+=$2} END {print v, n}'; }
ticks() { awk '{print $14, $15}' /proc/$pid/stat; }
j0=$(metric 'touchsync_db_write_jobs_total{outcome="committed"}'); t0=$(metric touchsync_db_transaction_seconds_count); s0=$(metric touchsync_db_transaction_seconds_sum)
read -r v0 n0 <<<"$(ctx)"; read -r u0 k0 <<<"$(ticks)"
if [[ -n "${PERF:-}" ]]; then (sleep 2; perf record -g -p "$pid" -o "$out/perf.data" -- sleep 5 >/dev/null 2>&1) & fi
if [[ -n "${STRACE:-}" ]]; then (sleep 2; timeout "${STRACE_SECONDS:-3}" strace -f -T -e trace=fsync,fdatasync,pwrite64,futex,eventfd2,write,epoll_wait -c -p "$pid" -o "$out/strace-c.txt" 2>/dev/null) & fi
res=$(taskset -c "$LOAD_CPU" wrk -t2 -c"${CONNECTIONS:-64}" -d"$DURATION" --latency -s bench/wrk/toggle.lua "$URL" | grep RESULT)
wait
j1=$(metric 'touchsync_db_write_jobs_total{outcome="committed"}'); t1=$(metric touchsync_db_transaction_seconds_count); s1=$(metric touchsync_db_transaction_seconds_sum)
read -r v1 n1 <<<"$(ctx)"; read -r u1 k1 <<<"$(ticks)"
python3 - "$res" "$j0" "$j1" "$t0" "$t1" "$s0" "$s1" "$v0" "$v1" "$n0" "$n1" "$u0" "$u1" "$k0" "$k1" "$(getconf CLK_TCK)" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import json, sys
a = sys.argv
r = json.loads(a[1][7:])
j0,j1,t0,t1 = (float(x) for x in a[2:6]); s0,s1 = float(a[6]), float(a[7])
v0,v1,n0,n1,u0,u1,k0,k1 = (float(x) for x in a[8:16]); tck = float(a[16])
req = max(r["requests"], 1); tx = max(t1 - t0, 1)
print("PROBE " + json.dumps({
  "req_s": r.get("rps"), "p50_ms": r.get("p50_ms"), "p99_ms": r.get("p99_ms"), "requests": req,
  "jobs_per_commit": round((j1 - j0) / tx, 2), "commits": int(tx), "commit_ms_mean": round((s1 - s0) * 1000 / tx, 3),
  "writer_busy_share": round((s1 - s0) / (req / max(r.get("rps") or 1, 1)), 3),
  "cpu_user_us_per_req": round((u1 - u0) * 1e6 / tck / req, 1), "cpu_sys_us_per_req": round((k1 - k0) * 1e6 / tck / req, 1),
  "vol_cs_per_req": round((v1 - v0) / req, 2), "invol_cs_per_req": round((n1 - n0) / req, 2), "load": a[17]}))
PY
if [[ -n "${STRACE:-}" ]]; then cat "$out/strace-c.txt"; fi
if [[ -n "${PERF:-}" ]]; then perf report -i "$out/perf.data" --no-children --sort dso --stdio 2>/dev/null | grep -v '^#' | head -15 >"$out/perf-dso.txt"; cat "$out/perf-dso.txt"; fi
