#!/usr/bin/env bash
# bench/server.sh start|stop|seed-only   — see bench/README.md
#   start: release-build touchsync, make a fresh database in $BENCH_DATA, seed it
#          (`touchsync bench-seed`), start the server pinned to CPU $SERVER_CPU on $BENCH_PORT.
#   Environment: SYNC=FULL|NORMAL (database.synchronous, default FULL), LOG_LEVEL (default warning),
#   EVENT_LOOPS (server.eventLoops, default 0 = one per usable core), NO_BUILD=1 to skip the build,
#   SEED_FROM=DIR: copy the database and id files `touchsync bench-seed` wrote into DIR instead of
#   seeding (bench/run-compare.sh gives every server of a round its own copy of one seed).
source "$(dirname "$0")/lib.sh"
cmd="${1:-start}"
pidfile="$BENCH_DATA/server.pid"

stop() {
  if [[ -f "$pidfile" ]]; then
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done; fi
    rm -f "$pidfile"
  fi
}

case "$cmd" in
  stop) stop; exit 0 ;;
  start) ;;
  *) echo "usage: bench/server.sh start|stop" >&2; exit 2 ;;
esac

stop
if [[ -z "${NO_BUILD:-}" ]]; then
  swift build -c release --scratch-path "$SCRATCH" --product touchsync >/dev/null
fi
mkdir -p "$BENCH_DATA"
db="$BENCH_DATA/bench.sqlite"
rm -f "$db" "$db-wal" "$db-shm" "$db.jwtsecret"
export TOUCHSYNC_DATABASE_SYNCHRONOUS="${SYNC:-FULL}"
export TOUCHSYNC_SERVER_MAX_CONNECTIONS="${MAX_CONNECTIONS:-20000}"
# Every benchmark socket comes from 127.0.0.1: lift the per-address cap (default 256).
export TOUCHSYNC_SERVER_MAX_CONNECTIONS_PER_ADDRESS="${MAX_CONNECTIONS_PER_ADDRESS:-0}"
# ...and the cap on its sessions between the handshake and the CONNECT (a run opens thousands at once).
export TOUCHSYNC_REALTIME_MAX_UNCONNECTED_SESSIONS_PER_ADDRESS="${MAX_UNCONNECTED_SESSIONS_PER_ADDRESS:-0}"
export TOUCHSYNC_SERVER_EVENT_LOOPS="${EVENT_LOOPS:-0}"
# One token stands for thousands of writes per second here: lift the per-user write limits (limits.*).
export TOUCHSYNC_LIMITS_ENABLED="${LIMITS_ENABLED:-false}"
if [[ -n "${SEED_FROM:-}" ]]; then
  for f in "$SEED_FROM"/bench.sqlite* "$SEED_FROM"/*.txt; do cp "$f" "$BENCH_DATA/"; done
else
  "$BIN/touchsync" bench-seed --database "$db" --out "$BENCH_DATA" --log-level warning 2>"$BENCH_DATA/seed.log"
fi
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
log="$BENCH_DATA/server.log"
taskset -c "$SERVER_CPU" "$BIN/touchsync" serve --port "$BENCH_PORT" --database "$db" --log-level "${LOG_LEVEL:-warning}" >"$log" 2>&1 &
echo $! >"$pidfile"
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$BENCH_PORT/health" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -sf "http://127.0.0.1:$BENCH_PORT/health" >/dev/null || { echo "server did not start; see $log" >&2; exit 1; }
echo "touchsync pid $(cat "$pidfile") on $URL, pinned to CPU $SERVER_CPU, synchronous=$TOUCHSYNC_DATABASE_SYNCHRONOUS, log $log"
