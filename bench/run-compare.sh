#!/usr/bin/env bash
# bench/run-compare.sh — TouchSync beside its reference peers in one sitting (bench/README.md, "Peers").
#
# Every round starts every server afresh, in a rotating order (round r begins with the r-th server,
# so a drift of the machine's load does not always hit the same one), each pinned to CPU
# $SERVER_CPU, wrk (bench/run-http.sh: $CONNS connections, $DURATION per run) on CPU $LOAD_CPU:
#   touchsync-sqlite  bench/server.sh (release, database.synchronous = FULL): health, toggle, interaction-state, my-rooms
#   hummingbird       bench/peers/hummingbird-health (Hummingbird 2, release): health
#   nginx             bench/peers/nginx-health.sh (Debian's nginx, one worker): health
#   aiohttp           bench/peer/peer.py (aiohttp + sqlite3, synchronous = FULL): health, toggle, interaction-state, my-rooms
#   touchsync-pg      one node on PostgreSQL (scripts/services.sh, fsync on): toggle, interaction-state, my-rooms
#   sqlite-c          SQLite alone (bench/sqlite-toggle, C): the server's toggle transaction for $DURATION, 64 and 1
#                     toggles per commit (the toggle's limit: bench/README.md, "The durable toggle's limit")
# The SQLite servers of a round each get their own copy of one `touchsync bench-seed` database;
# the PostgreSQL node a fresh copy of a database seeded once with the same command. Prints a markdown table
# (also written to $COMPARE_DATA/table.md): per row the median and spread (min–max) of req/s, p50
# and p99, the server's CPU per request, the load average (1 min) at the end of the runs, and
# the ratio TouchSync-on-SQLite ÷ this row, paired round by round (both runs of a pair measured in
# the same round), as median and spread. Non-2xx answers or socket errors are counted per row.
#
#   ROUNDS (3)  DURATION (10, seconds)  CONNS (64)   e.g. ROUNDS=1 DURATION=3 bench/run-compare.sh for a smoke run
#   NO_BUILD=1  skips the release builds (TouchSync in $SCRATCH, the Hummingbird peer in its package's .build)
#   PG=0        leaves PostgreSQL out (it is left out with a message when it is not installed)
source "$(dirname "$0")/lib.sh"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-10}"
[[ "$DURATION" =~ ^[0-9]+$ ]] && DURATION="${DURATION}s"
CONNS="${CONNS:-64}"
C="${COMPARE_DATA:-bench/.data-compare}"
HB_PACKAGE=bench/peers/hummingbird-health
PG_SECRET="bench-compare-secret-0123456789abcdef0123"   # the PostgreSQL node's tokens (no database file to keep one in)
# psql without the NOTICE of a DROP … IF EXISTS of nothing (only psql's sessions: libpq reads PGOPTIONS).
psql_admin() { PGOPTIONS="--client-min-messages=warning" "$PSQL_BIN" "$PG_ADMIN" "$@"; }

rm -rf "$C"; mkdir -p "$C/results"
C="$(cd "$C" && pwd)"
if [[ -z "${NO_BUILD:-}" ]]; then
  swift build -c release --scratch-path "$SCRATCH" --product touchsync >"$C/build.log" 2>&1 || { cat "$C/build.log" >&2; exit 1; }
  swift build -c release --package-path "$HB_PACKAGE" >"$C/build-hummingbird.log" 2>&1 || { cat "$C/build-hummingbird.log" >&2; exit 1; }
fi
HB_BIN="$HB_PACKAGE/.build/release/hummingbird-health"
[[ -x "$HB_BIN" ]] || { echo "no $HB_BIN: build it (swift build -c release --package-path $HB_PACKAGE) or drop NO_BUILD" >&2; exit 1; }
[[ -x "$BIN/touchsync" ]] || { echo "no $BIN/touchsync: drop NO_BUILD or set SCRATCH" >&2; exit 1; }
export TOUCHSYNC_LIMITS_ENABLED="${LIMITS_ENABLED:-false}"   # one token stands for thousands of writes per second
ulimit -n 20000 2>/dev/null || true

# What runs now, for the cleanup on exit (an interrupted run leaves no server behind).
hb_pid=""; pg_pid=""; services=""
cleanup() {
  BENCH_DATA="$C/ts" bench/server.sh stop 2>/dev/null || true
  bench/run-peer.sh stop 2>/dev/null || true
  bench/peers/nginx-health.sh stop 0 "$C/nginx" 2>/dev/null || true
  for p in $hb_pid $pg_pid; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  [[ -n "$services" ]] && scripts/services.sh stop "$services" >/dev/null 2>&1 || true
}
trap cleanup EXIT

servers=(touchsync-sqlite hummingbird nginx aiohttp)
SQLITE_TOGGLE="$C/sqlite-toggle"
if cc -O2 -o "$SQLITE_TOGGLE" bench/sqlite-toggle/sqlite-toggle.c -lsqlite3 >"$C/build-sqlite-toggle.log" 2>&1; then
  servers+=(sqlite-c)
else
  echo "SQLite-alone rows left out: bench/sqlite-toggle/sqlite-toggle.c did not build (cc and libsqlite3-dev; see $C/build-sqlite-toggle.log)" >&2
fi
if [[ "${PG:-1}" != 0 ]]; then
  services="$(mktemp -d "${TMPDIR:-/tmp}/touchsync-compare-services.XXXXXX")"; rmdir "$services"   # absolute: PostgreSQL runs as its own user
  taskset -c "$SERVER_CPU" scripts/services.sh start "$services" >/dev/null
  # shellcheck disable=SC1091
  . "$services/env"
  if [[ -n "${TOUCHSYNC_TEST_POSTGRES_URL:-}" ]]; then
    PG_ADMIN="$TOUCHSYNC_TEST_POSTGRES_URL"; PSQL_BIN="$(cat "$services/pg/bin")/psql"
    servers+=(touchsync-pg)
  else
    echo "PostgreSQL rows left out: ${TOUCHSYNC_TEST_SERVICES_SKIPPED:-PostgreSQL did not start}" >&2
  fi
fi

# wait_health PORT PID NAME: until /health answers; fails when the process is gone or after 20 s.
wait_health() {
  for _ in $(seq 200); do
    kill -0 "$2" 2>/dev/null || break
    curl -sf "http://127.0.0.1:$1/health" >/dev/null 2>&1 && return
    sleep 0.1
  done
  echo "$3 did not answer /health on port $1" >&2; exit 1
}

run_touchsync_sqlite() {
  local port; port=$(free_port)
  BENCH_DATA="$C/ts" BENCH_PORT="$port" SEED_FROM="$C/seed" NO_BUILD=1 bench/server.sh start >/dev/null
  for s in health toggle interaction-state my-rooms; do measure_http "$C/results" touchsync-sqlite "$s" "$port" "$C/ts" "$(cat "$C/ts/server.pid")"; done
  BENCH_DATA="$C/ts" bench/server.sh stop
}

run_hummingbird() {
  local port; port=$(free_port)
  taskset -c "$SERVER_CPU" "$HB_BIN" "$port" >"$C/hummingbird.log" 2>&1 &
  hb_pid=$!
  wait_health "$port" "$hb_pid" hummingbird
  measure_http "$C/results" hummingbird health "$port" "$C/hb" "$hb_pid"
  kill -TERM "$hb_pid"; wait "$hb_pid" 2>/dev/null || true; hb_pid=""
}

run_nginx() {
  local port; port=$(free_port)
  taskset -c "$SERVER_CPU" bench/peers/nginx-health.sh start "$port" "$C/nginx" >/dev/null
  measure_http "$C/results" nginx health "$port" "$C/nginx" "$(cat "$C/nginx/worker.pid")"
  bench/peers/nginx-health.sh stop "$port" "$C/nginx"
}

run_aiohttp() {
  local port; port=$(free_port)
  rm -rf "$C/peer-db"; mkdir -p "$C/peer-db"
  for f in "$C/seed"/bench.sqlite* "$C/seed"/*.txt; do cp "$f" "$C/peer-db/"; done
  PEER_PORT="$port" PEER_DATABASE="$C/peer-db/bench.sqlite" bench/run-peer.sh start >/dev/null
  for s in health toggle interaction-state my-rooms; do measure_http "$C/results" aiohttp "$s" "$port" bench/.data-peer "$(cat bench/.data-peer/peer.pid)"; done
  bench/run-peer.sh stop
}

# SQLite alone: the server's toggle statements in C on a copy of the round's seed, 64 toggles per
# commit (the server's largest group commit) and 1 (one fsync per toggle), pinned as the servers are.
run_sqlite_c() {
  local batch log
  for batch in 64 1; do
    rm -rf "$C/sqlite-c"; mkdir -p "$C/sqlite-c"
    cp "$C/seed"/bench.sqlite* "$C/sqlite-c/"
    log="$C/results/sqlite-c$batch.toggle.round$round.log"
    taskset -c "$SERVER_CPU" "$SQLITE_TOGGLE" --database "$C/sqlite-c/bench.sqlite" --room "$(cat "$C/seed/toggle-room.txt")" \
      --seconds "${DURATION%s}" --batch "$batch" --seed "$round" >"$log" 2>&1 || { echo "run failed: sqlite-c$batch (see $log)" >&2; exit 1; }
    read -r l1 _ </proc/loadavg
    grep -m1 '^RESULT ' "$log" | sed -e "s/^RESULT {/RESULT {\"round\": $round, /" -e "s/}\$/, \"load1\": $l1}/" \
      | tee -a "$C/results/sqlite-c$batch.toggle.out" | sed "s/^/round $round sqlite-c$batch toggle: /"
  done
}

# The PostgreSQL data set is seeded once per sitting (into bench_compare_seed; through PostgreSQL
# with fsync on it takes a minute or more) and every round's node gets a fresh copy of it
# (CREATE DATABASE … TEMPLATE: a file copy, a second), as the SQLite servers get copies of theirs.
seed_pg() {
  rm -rf "$C/pg"; mkdir -p "$C/pg"
  psql_admin -qc "DROP DATABASE IF EXISTS bench_compare_seed" -qc "CREATE DATABASE bench_compare_seed" >/dev/null
  TOUCHSYNC_JWT_SECRET="$PG_SECRET" "$BIN/touchsync" bench-seed --database-url "${PG_ADMIN%/*}/bench_compare_seed" --out "$C/pg" \
    --log-level warning 2>"$C/pg/seed.log" || { cat "$C/pg/seed.log" >&2; exit 1; }
}

run_touchsync_pg() {
  local port db; port=$(free_port); db="${PG_ADMIN%/*}/bench_compare"
  psql_admin -qc "DROP DATABASE IF EXISTS bench_compare" -qc "CREATE DATABASE bench_compare TEMPLATE bench_compare_seed" >/dev/null
  TOUCHSYNC_JWT_SECRET="$PG_SECRET" TOUCHSYNC_SERVER_MAX_CONNECTIONS=20000 TOUCHSYNC_SERVER_MAX_CONNECTIONS_PER_ADDRESS=0 TOUCHSYNC_REALTIME_MAX_UNCONNECTED_SESSIONS_PER_ADDRESS=0 \
    taskset -c "$SERVER_CPU" "$BIN/touchsync" serve --port "$port" --database-url "$db" --log-level warning >"$C/pg/server.log" 2>&1 &
  pg_pid=$!
  wait_health "$port" "$pg_pid" "touchsync on PostgreSQL"
  for s in toggle interaction-state my-rooms; do measure_http "$C/results" touchsync-pg "$s" "$port" "$C/pg" "$pg_pid"; done
  kill -TERM "$pg_pid"; wait "$pg_pid" 2>/dev/null || true; pg_pid=""
}

started="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
bench_context
echo "rounds $ROUNDS, $DURATION per run, $CONNS connections; servers: ${servers[*]}"
[[ " ${servers[*]} " == *" touchsync-pg "* ]] && seed_pg
for round in $(seq "$ROUNDS"); do
  # One seed per round; every SQLite server of the round starts from its own copy.
  rm -rf "$C/seed"; mkdir -p "$C/seed"
  "$BIN/touchsync" bench-seed --database "$C/seed/bench.sqlite" --out "$C/seed" --log-level warning 2>"$C/seed.log" \
    || { cat "$C/seed.log" >&2; exit 1; }
  n=${#servers[@]}
  for i in $(seq 0 $((n - 1))); do
    s=${servers[$(((i + round - 1) % n))]}
    "run_${s//-/_}"
  done
done

python3 - "$C/results" "$started" "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift 2>/dev/null || echo '+dirty')" \
  "$(nproc) CPUs, $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p'), kernel $(uname -r)" "$ROUNDS" "$DURATION" "$CONNS" \
  "$SERVER_CPU" "$LOAD_CPU" <<'PY' | tee "$C/table.md"
import json, os, statistics, sys
res, started, commit, machine, rounds, duration, conns, scpu, lcpu = sys.argv[1:]
def load(name, scenario):
    path = os.path.join(res, f"{name}.{scenario}.out")
    if not os.path.exists(path): return {}
    return {r["round"]: r for r in (json.loads(l.split("RESULT ", 1)[1]) for l in open(path) if l.startswith("RESULT "))}
def spread(vals, fmt):
    if not vals: return "–"
    return f"{fmt(statistics.median(vals))} ({fmt(min(vals))}–{fmt(max(vals))})" if len(vals) > 1 else fmt(vals[0])
f0 = lambda v: f"{v:,.0f}"; f1 = lambda v: f"{v:.1f}"; f2 = lambda v: f"{v:.2f}"
routes = [("GET /health", "health", ["touchsync-sqlite", "hummingbird", "nginx", "aiohttp"]),
          ("POST …/reactions/toggle", "toggle", ["touchsync-sqlite", "aiohttp", "touchsync-pg", "sqlite-c64", "sqlite-c1"]),
          ("POST interaction-state (50 ids)", "interaction-state", ["touchsync-sqlite", "aiohttp", "touchsync-pg"]),
          ("GET /api/rooms/my-rooms (50 rooms)", "my-rooms", ["touchsync-sqlite", "aiohttp", "touchsync-pg"])]
names = {"touchsync-sqlite": "TouchSync, SQLite", "hummingbird": "Hummingbird 2", "nginx": "nginx (1 worker)",
         "aiohttp": "aiohttp + sqlite3", "touchsync-pg": "TouchSync, PostgreSQL",
         "sqlite-c64": "SQLite alone (C), 64 per commit", "sqlite-c1": "SQLite alone (C), 1 per commit"}
print(f"Peers in one sitting: {started}, commit {commit}, {machine}; server CPU {scpu}, wrk CPU {lcpu} "
      f"(-t2 -c{conns} -d{duration}), {rounds} interleaved round(s), every server fresh each round.")
print()
print("| route | server | req/s | p50 ms | p99 ms | server CPU µs/req | TouchSync-SQLite ÷ this (paired) | load1 | errors |")
print("|---|---|---|---|---|---|---|---|---|")
bad = 0
for title, scenario, servers in routes:
    base = load("touchsync-sqlite", scenario)
    for s in servers:
        rows = load(s, scenario)
        if not rows: continue
        rs = list(rows.values())
        ratios = [base[k]["rps"] / r["rps"] for k, r in rows.items() if k in base and r["rps"] > 0]
        errors = sum(r.get("errors", 0) for r in rs)  # wrk counts non-2xx among its errors
        bad += errors
        cpu = [r["server_cpu_us_per_req"] for r in rs if "server_cpu_us_per_req" in r]
        print(f"| {title} | {names[s]} | {spread([r['rps'] for r in rs], f0)} | {spread([r['p50_ms'] for r in rs], f2)} "
              f"| {spread([r['p99_ms'] for r in rs], f2)} | {spread(cpu, f1)} | {'1' if s == 'touchsync-sqlite' else spread(ratios, f2)} "
              f"| {spread([r['load1'] for r in rs], f2)} | {errors} |")
if load("sqlite-c64", "toggle"):
    print("\nSQLite alone: no HTTP, the server's toggle statements in one process (bench/sqlite-toggle); its p50/p99 are a "
          "commit batch's time from BEGIN to COMMIT, and its ratio is the server's fraction of that limit.")
if bad:
    print(f"\n{bad} non-2xx answers or socket errors: those rows are not measurements; see the *.log files in {res}", file=sys.stderr)
    sys.exit(1)
PY
