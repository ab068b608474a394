#!/usr/bin/env bash
# bench/run-cluster.sh latency|throughput|toggle|all   — the cluster numbers (bench/README.md, "Cluster")
#
#   latency     creation→delivery latency of element:created, same-node against cross-node: two
#               nodes sharing PostgreSQL + Redis, REST on node A, 100 sockets on node A (same node)
#               or on node B (every event crosses Redis); plus one node without Redis (today's path);
#               then bench/cluster-latency.py: one socket on A and one on B, the Redis hop measured
#               per event as the difference of the two arrivals (needs websocket-client: .venv).
#   throughput  deliveries/s of a 1000-socket room: one node without Redis against three nodes
#               with Redis (sockets round-robin over them, REST on the first), closed loop.
#   toggle      POST …/reactions/toggle (wrk, bench/wrk/toggle.lua) on SQLite against PostgreSQL.
#
# Pinning as everywhere in bench/: everything server-side (every node, PostgreSQL, Redis) on CPU
# $SERVER_CPU, every load generator on CPU $LOAD_CPU. On a 2-core machine three nodes therefore share
# the one core one node had: the throughput row measures what clustering costs, not what more
# machines would add (RESULTS.md explains). RUNS (default 3) runs per row; medians printed.
# Needs PostgreSQL and Redis installed (scripts/services.sh starts throw-away servers) and a build
# with `serve --database-url` / `--redis-url`. NO_BUILD=1 skips the release build (SCRATCH: its path).
source "$(dirname "$0")/lib.sh"
what="${1:-all}"
RUNS="${RUNS:-3}"
CLUSTER_DATA="${CLUSTER_DATA:-bench/.data-cluster}"
mkdir -p "$CLUSTER_DATA"
# Free ports unless given (fixed ones collide with other benchmarks running on the same machine).
PORT_A="${PORT_A:-$(free_port)}"; PORT_B="${PORT_B:-$(free_port)}"; PORT_C="${PORT_C:-$(free_port)}"
export BENCH_DATA="$CLUSTER_DATA"   # bench/lib.sh's median_of keeps its summary there
export TOUCHSYNC_JWT_SECRET="${TOUCHSYNC_JWT_SECRET:-bench-cluster-secret-0123456789abcdef0123}"
export TOUCHSYNC_SERVER_MAX_CONNECTIONS=20000 TOUCHSYNC_SERVER_MAX_CONNECTIONS_PER_ADDRESS=0 TOUCHSYNC_REALTIME_MAX_UNCONNECTED_SESSIONS_PER_ADDRESS=0
export TOUCHSYNC_LIMITS_ENABLED="${LIMITS_ENABLED:-false}"  # per-user write limits off: one writer at thousands/s
export TOUCHSYNC_DATABASE_SYNCHRONOUS="${SYNC:-FULL}"
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"

if [[ -z "${NO_BUILD:-}" ]]; then
  swift build -c release --scratch-path "$SCRATCH" --product touchsync >/dev/null
  swift build -c release --scratch-path "$SCRATCH" --product touchsync-bench >/dev/null
fi
# STORAGE=postgres (default) or sqlite-shared: every node on one SQLite file (WAL across processes),
# for a build without PostgreSQL; the toggle scenario needs postgres.
STORAGE="${STORAGE:-postgres}"
if [[ "$STORAGE" == postgres ]]; then
  "$BIN/touchsync" serve --help | grep -q -- "--database-url" || { echo "this build has no serve --database-url (STORAGE=sqlite-shared runs latency/throughput on one shared SQLite file)" >&2; exit 1; }
fi
"$BIN/touchsync" serve --help | grep -q -- "--redis-url" || { echo "this build has no serve --redis-url" >&2; exit 1; }

services="$(mktemp -d "${TMPDIR:-/tmp}/touchsync-bench-services.XXXXXX")"   # absolute: PostgreSQL runs as its own user
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  scripts/services.sh stop "$services" >/dev/null 2>&1 || true
}
trap cleanup EXIT
rmdir "$services"
# PostgreSQL and Redis inherit the server CPU.
taskset -c "$SERVER_CPU" scripts/services.sh start "$services"
# shellcheck disable=SC1091
. "$services/env"
[[ -n "${TOUCHSYNC_TEST_REDIS_URL:-}" ]] || { echo "Redis missing: ${TOUCHSYNC_TEST_SERVICES_SKIPPED:-}" >&2; exit 1; }
[[ "$STORAGE" != postgres || -n "${TOUCHSYNC_TEST_POSTGRES_URL:-}" ]] || { echo "PostgreSQL missing: ${TOUCHSYNC_TEST_SERVICES_SKIPPED:-}" >&2; exit 1; }
PG_ADMIN="${TOUCHSYNC_TEST_POSTGRES_URL:-}"; REDIS="$TOUCHSYNC_TEST_REDIS_URL"
PSQL="$(cat "$services/pg/bin" 2>/dev/null || true)/psql"

# fresh_db NAME: a new empty database; prints the option naming it (--database-url URL or --database FILE).
fresh_db() {
  if [[ "$STORAGE" == postgres ]]; then
    "$PSQL" "$PG_ADMIN" -qc "DROP DATABASE IF EXISTS $1" -qc "CREATE DATABASE $1" >/dev/null
    echo "--database-url=${PG_ADMIN%/*}/$1"
  else
    rm -f "$CLUSTER_DATA/$1.sqlite"*
    echo "--database=$CLUSTER_DATA/$1.sqlite"
  fi
}

# seed DBOPTION DIR: migrate + bench-seed into the database, ids and tokens into DIR.
seed() {
  rm -rf "$2"; mkdir -p "$2"
  "$BIN/touchsync" bench-seed "$1" --out "$2" --log-level warning 2>"$2/seed.log" \
    || { cat "$2/seed.log" >&2; exit 1; }
}

# node PORT DBOPTION [serve options...]: a node pinned to the server CPU; waits for /health.
node() {
  local port=$1 db=$2; shift 2
  taskset -c "$SERVER_CPU" "$BIN/touchsync" serve --port "$port" "$db" --log-level warning "$@" \
    >"$CLUSTER_DATA/node-$port.log" 2>&1 &
  local pid=$!
  pids+=($pid)
  for _ in $(seq 200); do
    kill -0 "$pid" 2>/dev/null || break   # e.g. the port was taken: never measure someone else's server
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && return
    sleep 0.1
  done
  echo "node on $port did not start: $CLUSTER_DATA/node-$port.log" >&2; tail -20 "$CLUSTER_DATA/node-$port.log" >&2; exit 1
}
stop_nodes() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}

# fan_once NAME DATA [touchsync-bench fanout options...]: one run of the fan-out tool, its RESULT
# line appended to $CLUSTER_DATA/NAME.out. report NAME: the medians. Rows compared with each other
# are interleaved run by run, so a change in the machine's load hits both alike.
fan_once() {
  local name=$1 data=$2; shift 2
  taskset -c "$LOAD_CPU" "$BIN/touchsync-bench" fanout --data "$data" "$@" | grep RESULT | tee -a "$CLUSTER_DATA/$name.out"
  sleep 1
}
report() {
  echo "== $1"
  median_of "$CLUSTER_DATA/$1.out"
}

A="http://127.0.0.1:$PORT_A"; B="http://127.0.0.1:$PORT_B"; C="http://127.0.0.1:$PORT_C"
echo "== $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) storage $STORAGE, load average: $(cut -d' ' -f1-3 /proc/loadavg)"

if [[ "$what" == latency || "$what" == all ]]; then
  db=$(fresh_db bench_cluster_latency); seed "$db" "$CLUSTER_DATA/latency"
  LAT=(--sockets "${LAT_SOCKETS:-100}" --events "${LAT_EVENTS:-300}" --rate "${LAT_RATE:-50}")
  : >"$CLUSTER_DATA/latency-one-node-no-redis.out"; : >"$CLUSTER_DATA/latency-same-node.out"; : >"$CLUSTER_DATA/latency-cross-node.out"
  node "$PORT_A" "$db"
  for _ in $(seq "$RUNS"); do fan_once latency-one-node-no-redis "$CLUSTER_DATA/latency" --url "$A" "${LAT[@]}"; done
  stop_nodes
  node "$PORT_A" "$db" --redis-url "$REDIS"; node "$PORT_B" "$db" --redis-url "$REDIS"
  for _ in $(seq "$RUNS"); do
    fan_once latency-same-node "$CLUSTER_DATA/latency" --url "$A" --socket-urls "$A" "${LAT[@]}"
    fan_once latency-cross-node "$CLUSTER_DATA/latency" --url "$A" --socket-urls "$B" "${LAT[@]}"
  done
  # The paired probe: one socket on A and one on B see the same events (bench/cluster-latency.py).
  : >"$CLUSTER_DATA/latency-paired.out"
  for _ in $(seq "$RUNS"); do
    taskset -c "$LOAD_CPU" "${PYTHON:-.venv/bin/python}" bench/cluster-latency.py --a "$A" --b "$B" --data "$CLUSTER_DATA/latency" \
      --events "${PAIRED_EVENTS:-500}" --rate "${PAIRED_RATE:-50}" | tee -a "$CLUSTER_DATA/latency-paired.out"
  done
  stop_nodes
  report latency-one-node-no-redis; report latency-same-node; report latency-cross-node; report latency-paired
fi

if [[ "$what" == throughput || "$what" == all ]]; then
  db=$(fresh_db bench_cluster_throughput); seed "$db" "$CLUSTER_DATA/throughput"
  TP=(--sockets "${TP_SOCKETS:-1000}" --events "${TP_EVENTS:-200}" --rate 0 --concurrency 4)
  : >"$CLUSTER_DATA/throughput-one-node.out"; : >"$CLUSTER_DATA/throughput-three-nodes.out"
  # Alternate the two set-ups run by run (each run starts its nodes afresh on the same database).
  for _ in $(seq "$RUNS"); do
    node "$PORT_A" "$db"
    fan_once throughput-one-node "$CLUSTER_DATA/throughput" --url "$A" "${TP[@]}"
    stop_nodes
    node "$PORT_A" "$db" --redis-url "$REDIS"; node "$PORT_B" "$db" --redis-url "$REDIS"; node "$PORT_C" "$db" --redis-url "$REDIS"
    fan_once throughput-three-nodes "$CLUSTER_DATA/throughput" --url "$A" --socket-urls "$A,$B,$C" "${TP[@]}"
    stop_nodes
  done
  report throughput-one-node; report throughput-three-nodes
fi

if [[ "$what" == toggle || "$what" == all ]]; then
  # SQLite: the recorded setup of bench/server.sh (fresh seeded file, same pinning).
  SQLITE_DATA="$CLUSTER_DATA/toggle-sqlite"
  BENCH_DATA="$SQLITE_DATA" BENCH_PORT="$PORT_A" NO_BUILD=1 bench/server.sh start
  BENCH_DATA="$SQLITE_DATA" URL="$A" RUNS="$RUNS" bench/run-http.sh toggle | tail -12
  BENCH_DATA="$SQLITE_DATA" bench/server.sh stop
  [[ "$STORAGE" == postgres ]] || { echo "toggle on PostgreSQL needs STORAGE=postgres" >&2; exit 1; }
  # PostgreSQL: the same data set seeded through the same services, one node, no Redis.
  db=$(fresh_db bench_cluster_toggle); seed "$db" "$CLUSTER_DATA/toggle-pg"
  node "$PORT_A" "$db"
  BENCH_DATA="$CLUSTER_DATA/toggle-pg" URL="$A" RUNS="$RUNS" bench/run-http.sh toggle | tail -12
  stop_nodes
fi
