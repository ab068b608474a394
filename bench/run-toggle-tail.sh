#!/usr/bin/env bash
# bench/run-toggle-tail.sh [tail|wal]   — the durable toggle's tail and the WAL's size over time.
# Against a running bench server (bench/server.sh start; synchronous = FULL there).
#
#   tail (default): RUNS (default 5) wrk runs of the toggle scenario, -t2 -c$CONNECTIONS (64)
#        -d$DURATION (10s), pinned to CPU $LOAD_CPU; while each runs, the WAL file's size is
#        sampled every 0.2 s. Each RESULT line: req/s, p50, p99, max latency, the largest WAL seen,
#        the server's CPU µs per toggle, the checkpointer's passes and the writer's WAL restarts
#        (count, mean ms; /metrics) during the run, the load average; then the median and spread.
#   wal: one long run at low load (wrk -t1 -c$WAL_CONNECTIONS (4), WAL_MINUTES (10) minutes),
#        printing a `WAL {"t_s":…, "wal_bytes":…, "db_bytes":…}` line every $WAL_EVERY (5) seconds and
#        a RESULT line at the end (toggles/s, p50, p99, the largest and the last WAL size): the WAL
#        stays under database.walMaxBytes (64 MiB) plus one group commit however long writes go on.
#
#   bench/server.sh start && bench/run-toggle-tail.sh             # req/s, p50, p99 at 64 connections
#   bench/server.sh start && bench/run-toggle-tail.sh wal         # 10 minutes of WAL samples
#   WAL_MINUTES=3 bench/run-toggle-tail.sh wal                    # a shorter record
source "$(dirname "$0")/lib.sh"
mode="${1:-tail}"
wal="$BENCH_DATA/bench.sqlite-wal"
db="$BENCH_DATA/bench.sqlite"
[[ -f "$db" ]] || { echo "no $db: run bench/server.sh start first" >&2; exit 1; }
size() { stat -c %s "$1" 2>/dev/null || echo 0; }
mkdir -p "$BENCH_DATA"
bench_context

case "$mode" in
  tail)
    out="$BENCH_DATA/toggle-tail.out"
    : >"$out"
    # The server's CPU time (user + system, all threads) per answered toggle, as run-http.sh does.
    pid="${SERVER_PID:-$(cat "$BENCH_DATA/server.pid" 2>/dev/null || true)}"
    cpu_ticks() { [[ -n "$pid" && -r /proc/$pid/stat ]] && awk '{print $14 + $15}' "/proc/$pid/stat" || echo 0; }
    # WAL checkpoint counters from /metrics (absent on builds without them: reported as 0).
    metric() { curl -s "$URL/metrics" | awk -v m="$1" '$1 == m {print $2; found=1} END {if (!found) print 0}'; }
    walstats() { echo "$(metric 'touchsync_db_wal_checkpoints_total{kind="passive"}') $(metric 'touchsync_db_wal_checkpoints_total{kind="restart"}') $(metric touchsync_db_wal_restart_seconds_total)"; }
    for i in $(seq "$RUNS"); do
      w0=$(walstats)
      t0=$(cpu_ticks)
      samples="$BENCH_DATA/toggle-tail-wal.$i"
      : >"$samples"
      ( while :; do size "$wal" >>"$samples"; sleep 0.2; done ) &
      sampler=$!
      result=$(taskset -c "$LOAD_CPU" wrk -t"${THREADS:-2}" -c"${CONNECTIONS:-64}" -d"${DURATION:-10s}" --latency \
               -s bench/wrk/toggle.lua "$URL" | grep '^RESULT' | with_load)
      t1=$(cpu_ticks)
      w1=$(walstats)
      kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
      python3 - "$result" "$samples" "$t0" "$t1" "$(getconf CLK_TCK)" "$w0" "$w1" <<'PY' | tee -a "$out"
import json, sys
r = json.loads(sys.argv[1][7:])
sizes = [int(x) for x in open(sys.argv[2]).read().split() if x.strip()]
keep = {k: r[k] for k in ("rps", "p50_ms", "p99_ms", "max_ms", "requests", "errors", "load1") if k in r}
keep["wal_max_bytes"] = max(sizes or [0])
t0, t1, tck = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
if t1 > t0:
    keep["server_cpu_us_per_req"] = round((t1 - t0) * 1e6 / tck / max(r.get("requests", 1), 1), 1)
w0, w1 = [float(x) for x in sys.argv[6].split()], [float(x) for x in sys.argv[7].split()]
keep["wal_passes"], keep["wal_restarts"] = int(w1[0] - w0[0]), int(w1[1] - w0[1])
if w1[1] > w0[1]:
    keep["wal_restart_ms_mean"] = round((w1[2] - w0[2]) * 1000 / (w1[1] - w0[1]), 2)
print("RESULT " + json.dumps(keep))
PY
    done
    echo "== toggle tail"
    median_of "$out" "${LABEL:-toggle-tail}"
    ;;
  wal)
    minutes="${WAL_MINUTES:-10}"
    every="${WAL_EVERY:-5}"
    out="$BENCH_DATA/toggle-wal.out"
    : >"$out"
    metric() { curl -s "$URL/metrics" | awk -v m="$1" '$1 == m {print $2; found=1} END {if (!found) print 0}'; }
    taskset -c "$LOAD_CPU" wrk -t1 -c"${WAL_CONNECTIONS:-4}" -d"${minutes}m" --timeout 10s --latency \
      -s bench/wrk/toggle.lua "$URL" >"$BENCH_DATA/toggle-wal.wrk" 2>&1 &
    load=$!
    start=$(date +%s)
    while kill -0 "$load" 2>/dev/null; do
      printf 'WAL {"t_s": %d, "wal_bytes": %d, "db_bytes": %d, "load1": %s}\n' \
        "$(( $(date +%s) - start ))" "$(size "$wal")" "$(size "$db")" "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$out"
      sleep "$every"
    done
    wait "$load" || true
    checkpoints="$(metric 'touchsync_db_wal_checkpoints_total{kind="passive"}') $(metric 'touchsync_db_wal_checkpoints_total{kind="restart"}') $(metric 'touchsync_db_wal_checkpoints_total{kind="restart_busy"}') $(metric touchsync_db_wal_restart_seconds_total)"
    python3 - "$out" "$BENCH_DATA/toggle-wal.wrk" "$checkpoints" <<'PY'
import json, sys
samples = [json.loads(l[4:]) for l in open(sys.argv[1]) if l.startswith("WAL ")]
res = [l for l in open(sys.argv[2]) if l.startswith("RESULT ")]
r = json.loads(res[-1][7:]) if res else {}
c = [float(x) for x in sys.argv[3].split()]
print("RESULT " + json.dumps({"minutes": round(samples[-1]["t_s"] / 60, 1) if samples else 0, "rps": r.get("rps"),
      "p50_ms": r.get("p50_ms"), "p99_ms": r.get("p99_ms"), "samples": len(samples),
      "wal_max_bytes": max((s["wal_bytes"] for s in samples), default=0),
      "wal_last_bytes": samples[-1]["wal_bytes"] if samples else 0,
      "db_last_bytes": samples[-1]["db_bytes"] if samples else 0,
      "wal_passes": int(c[0]), "wal_restarts": int(c[1]), "wal_restarts_busy": int(c[2]),
      "wal_restart_ms_mean": round(c[3] * 1000 / c[1], 2) if c[1] else None}))
PY
    ;;
  *) echo "usage: bench/run-toggle-tail.sh [tail|wal]" >&2; exit 2 ;;
esac
