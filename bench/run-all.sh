#!/usr/bin/env bash
# bench/run-all.sh — every scenario of bench/README.md, RUNS (default 5) times each, medians
# printed; the full log goes to bench/.data/run-all-<time>.log. Takes ~20 minutes.
# Set NO_BUILD=1 and SCRATCH to reuse a release build; SKIP_PEER=1 to leave out python-socketio.
source "$(dirname "$0")/lib.sh"
export RUNS="${RUNS:-5}"
mkdir -p "$BENCH_DATA"
log="$BENCH_DATA/run-all-$(date +%Y%m%d-%H%M%S).log"
exec > >(tee "$log") 2>&1
if [[ -z "${NO_BUILD:-}" ]]; then
  swift build -c release --scratch-path "$SCRATCH" --product touchsync >/dev/null
  swift build -c release --scratch-path "$SCRATCH" --product touchsync-bench >/dev/null
fi
export NO_BUILD=1
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift || echo ' (+ uncommitted changes)')"
echo "machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), $(free -h | awk '/^Mem:/ {print $2}') RAM; kernel $(uname -r)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

bench/server.sh start
for s in health toggle my-rooms interaction-state element-create; do
  bench/run-http.sh "$s"
done

rt() { bench/run-realtime.sh "$@"; }
rt fanout --sockets 1000 --events 100 --rate 20
rt fanout --sockets 1000 --events 200 --rate 0 --concurrency 4
rt fanout-global --sockets 1000 --events 100 --rate 20
rt fanout --sockets 5000 --events 40 --rate 4
rt fanout --sockets 5000 --events 40 --rate 0 --concurrency 4
rt join
rt reconnect --sockets 1000
RUNS=1 rt fanout --sockets 10000 --events 10 --rate 1

# RSS per joined idle socket needs a fresh process for each run (freed memory is not returned).
: >"$BENCH_DATA/rt-rss.out"
for i in $(seq "$RUNS"); do
  bench/server.sh start >/dev/null
  taskset -c "$LOAD_CPU" "$BIN/touchsync-bench" fanout --sockets 1000 --events 5 --rate 5 --url "$URL" --data "$BENCH_DATA" \
    --server-pid "$(cat "$BENCH_DATA/server.pid")" | tee -a "$BENCH_DATA/rt-rss.out" | grep -E "RSS"
done
echo "== RSS per socket (fresh server each run)"; median_of "$BENCH_DATA/rt-rss.out"
bench/server.sh stop

if [[ -z "${SKIP_PEER:-}" ]]; then
  peer() {
    bench/run-peer.sh start >/dev/null
    BENCH_DATA=bench/.data-peer URL=http://127.0.0.1:${PEER_PORT:-3901} PEER_PID=$(cat bench/.data-peer/peer.pid) bench/run-realtime.sh "$@"
  }
  echo "==== python-socketio peer"
  peer fanout --sockets 1000 --events 100 --rate 20
  peer fanout --sockets 1000 --events 200 --rate 0 --concurrency 4
  peer fanout --sockets 5000 --events 20 --rate 4
  : >bench/.data-peer/rt-rss.out
  for i in $(seq "$RUNS"); do
    bench/run-peer.sh start >/dev/null
    taskset -c "$LOAD_CPU" "$BIN/touchsync-bench" fanout --sockets 1000 --events 5 --rate 5 --url "http://127.0.0.1:${PEER_PORT:-3901}" \
      --data bench/.data-peer --server-pid "$(cat bench/.data-peer/peer.pid)" | tee -a bench/.data-peer/rt-rss.out | grep -E "RSS"
  done
  echo "== peer RSS per socket (fresh peer each run)"; median_of bench/.data-peer/rt-rss.out
  bench/run-peer.sh stop
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "log: $log"
