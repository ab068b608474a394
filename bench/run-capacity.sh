#!/usr/bin/env bash
# bench/run-capacity.sh [touchsync-bench capacity options...]   — see bench/README.md, "Capacity"
#   How many app users one server holds: release-builds touchsync and touchsync-bench (NO_BUILD=1
#   skips it), then `touchsync-bench capacity` starts the server itself on CPU $SERVER_CPU (a fresh
#   SQLite database in $CAPACITY_DATA at synchronous=$SYNC, or PostgreSQL with DATABASE_URL=…),
#   seeds it, and steps the simulated users up from its own CPU $LOAD_CPU.
#   Prints a block for bench/RESULTS.md: date, commit, machine, the load average before and after,
#   the exact command, one row per step and the `capacity: N users (…)` line. The whole output is
#   kept in $CAPACITY_DATA/capacity-<date>.log and every step's RESULT line (with the load average
#   at its end) in $CAPACITY_DATA/capacity-<date>.results.
#
#   bench/run-capacity.sh                                         # 1000, 2000, … up to 20000 users
#   bench/run-capacity.sh --start 8000 --step 1000 --max 14000 --bisect 3
#   DATABASE_URL=postgres://… DATABASE_PID=<postmaster pid> bench/run-capacity.sh   # the same run on PostgreSQL
#   NO_BUILD=1 bench/run-capacity.sh --start 100 --step 100 --max 300 --warmup 10s --steady 30s   # a functional run
source "$(dirname "$0")/lib.sh"
data="${CAPACITY_DATA:-bench/.data-capacity}"
mkdir -p "$data"
if [[ -z "${NO_BUILD:-}" ]]; then
  swift build -c release --scratch-path "$SCRATCH" --product touchsync >/dev/null
  swift build -c release --scratch-path "$SCRATCH" --product touchsync-bench >/dev/null
fi
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
log="$data/capacity-$stamp.log"
args=(capacity --server-bin "$BIN/touchsync" --data "$data" --server-cpus "$SERVER_CPU" --client-cpus "$LOAD_CPU"
      --synchronous "${SYNC:-FULL}")
[[ -n "${DATABASE_URL:-}" ]] && args+=(--database-url "$DATABASE_URL")
[[ -n "${DATABASE_PID:-}" ]] && args+=(--database-pid "$DATABASE_PID")
args+=("$@")
# The tool raises its open-file limit itself (and says when it cannot); the server inherits it.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
"$BIN/touchsync-bench" "${args[@]}" 2>&1 | with_load | tee "$log"
status=${PIPESTATUS[0]}
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
grep '^RESULT ' "$log" >"$data/capacity-$stamp.results" || true
[[ $status -eq 0 ]] || { echo "touchsync-bench capacity failed (status $status); see $log" >&2; exit "$status"; }

echo
echo "== for bench/RESULTS.md"
bench_context
echo "load average before: $load_before; after: $load_after"
echo "command: $BIN/touchsync-bench ${args[*]}"
python3 - "$log" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
rows = [json.loads(l[7:]) for l in lines if l.startswith("RESULT ")]
def f(r, k, fmt="{:.1f}"):
    v = r.get(k)
    return "—" if v is None else fmt.format(v)
print()
print("| users | create→visible p99 ms | join p99 ms | reconnect p99 ms | REST p99 ms | errors | server CPU % | PostgreSQL CPU % | RSS MB | KB/user (anon) | load CPU % | lag p99 ms | load1 | verdict |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    verdict = "invalid" if not r.get("valid", 1) else ("pass" if r.get("passed") else "fail")
    cpu = "—" if r.get("server_cpu") is None else f"{100 * r['server_cpu']:.0f}"
    db = "—" if r.get("database_cpu") is None else f"{100 * r['database_cpu']:.0f}"
    per_user = f"{f(r, 'rss_kb_per_user')} ({f(r, 'rss_anon_kb_per_user')})"
    print(f"| {int(r['users'])} | {f(r, 'visible_p99_ms')} | {f(r, 'join_p99_ms')} | {f(r, 'reconnect_p99_ms')} | {f(r, 'rest_p99_ms')} | "
          f"{int(r.get('errors', 0))} | {cpu} | {db} | {f(r, 'server_rss_mb')} | {per_user} | {100 * r.get('load_cpu', 0):.0f} | {f(r, 'lag_p99_ms', '{:.2f}')} | "
          f"{r.get('load1', '—')} | {verdict} |")
print()
print(next((l for l in reversed(lines) if l.startswith("capacity: ")), "capacity: (no capacity line: the run stopped early)"))
PY
