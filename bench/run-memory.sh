#!/usr/bin/env bash
# bench/run-memory.sh [BUILD_DIR...]   — memory per idle joined socket
#   For each round, each socket count in $SOCKETS and each build directory (a --scratch-path
#   holding release/touchsync and release/touchsync-bench; default $SCRATCH, built unless
#   NO_BUILD=1), starts a FRESH server (bench/server.sh, pinned to $SERVER_CPU), connects N
#   WebSocket Socket.IO sockets that join the fan-out room (`touchsync-bench fanout --sockets N`,
#   a few creations only), and prints the server's VmRSS delta per socket (read before connecting
#   and 0.5 s after the last join) with the load average. Builds alternate within a round, so a
#   before/after comparison is interleaved.
#   Environment: SOCKETS (default "1000 5000"), ROUNDS (default 3), BENCH_CLIENT (one
#   touchsync-bench for every build; default each build's own), HEAPTRACK=1 runs each server
#   under heaptrack (output in $BENCH_DATA/heaptrack.*; then the RSS numbers include its overhead;
#   the trace ends after the sockets closed, so read `heaptrack_print --print-peaks`, or SIGKILL
#   the server while it holds the sockets and read what is still allocated, as RESULTS.md did).
source "$(dirname "$0")/lib.sh"
builds=("$@")
if [[ ${#builds[@]} -eq 0 ]]; then
  builds=("$SCRATCH")
  if [[ -z "${NO_BUILD:-}" ]]; then
    swift build -c release --scratch-path "$SCRATCH" --product touchsync >/dev/null
    swift build -c release --scratch-path "$SCRATCH" --product touchsync-bench >/dev/null
  fi
fi
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
mkdir -p "$BENCH_DATA"
out="$BENCH_DATA/memory.out"
: >"$out"
for round in $(seq "${ROUNDS:-3}"); do
  for n in ${SOCKETS:-1000 5000}; do
    for b in "${builds[@]}"; do
      NO_BUILD=1 SCRATCH="$b" bash "$BENCH_DIR/server.sh" start >/dev/null
      pid=$(cat "$BENCH_DATA/server.pid")
      if [[ -n "${HEAPTRACK:-}" ]]; then
        # Restart the same server under heaptrack (same database, already seeded).
        kill -TERM "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
        TOUCHSYNC_DATABASE_SYNCHRONOUS="${SYNC:-FULL}" TOUCHSYNC_SERVER_MAX_CONNECTIONS=20000 \
        TOUCHSYNC_SERVER_MAX_CONNECTIONS_PER_ADDRESS=0 TOUCHSYNC_REALTIME_MAX_UNCONNECTED_SESSIONS_PER_ADDRESS=0 TOUCHSYNC_SERVER_EVENT_LOOPS="${EVENT_LOOPS:-0}" \
          taskset -c "$SERVER_CPU" heaptrack -o "$BENCH_DATA/heaptrack.$(basename "$b").$n.$round" \
          "$b/release/touchsync" serve --port "$BENCH_PORT" --database "$BENCH_DATA/bench.sqlite" --log-level warning \
          >"$BENCH_DATA/server.log" 2>&1 &
        for _ in $(seq 200); do curl -sf "$URL/health" >/dev/null 2>&1 && break; sleep 0.1; done
        pid=$(pgrep -n -f "release/touchsync serve --port $BENCH_PORT" || true)
        echo "$pid" >"$BENCH_DATA/server.pid"
      fi
      line=$(taskset -c "$LOAD_CPU" "${BENCH_CLIENT:-$b/release/touchsync-bench}" fanout --url "$URL" --data "$BENCH_DATA" --server-pid "$pid" \
               --sockets "$n" --events 4 --rate 10 | grep "server RSS")
      read -r l1 l5 l15 _ </proc/loadavg
      echo "round $round  sockets $n  build $b  $line  load $l1 $l5 $l15" | tee -a "$out"
      bash "$BENCH_DIR/server.sh" stop
      sleep 1
    done
  done
done
