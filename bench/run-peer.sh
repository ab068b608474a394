#!/usr/bin/env bash
# bench/run-peer.sh start|stop — the python-socketio reference peer (bench/peer/peer.py) pinned to
# CPU $SERVER_CPU on port $PEER_PORT (3901); its data dir is bench/.data-peer. Then e.g.:
#   BENCH_DATA=bench/.data-peer URL=http://127.0.0.1:3901 PEER_PID=$(cat bench/.data-peer/peer.pid) bench/run-realtime.sh fanout
# When the server's seeded database exists (PEER_DATABASE, default $BENCH_DATA/bench.sqlite from
# bench/server.sh start), the peer also serves interaction-state from it (aiohttp + sqlite3), and
# my-rooms and the toggle (a durable sqlite3 write per request), and its data dir gets the seeded
# tokens and ids, so:
#   BENCH_DATA=bench/.data-peer URL=http://127.0.0.1:3901 bench/run-http.sh interaction-state   (or my-rooms, toggle)
source "$(dirname "$0")/lib.sh"
PEER_PORT="${PEER_PORT:-3901}"
data=bench/.data-peer
pidfile="$data/peer.pid"
if [[ -f "$pidfile" ]]; then
  old=$(cat "$pidfile")
  kill "$old" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$old" 2>/dev/null || break; sleep 0.1; done
  rm -f "$pidfile"
fi
[[ "${1:-start}" == stop ]] && exit 0
if [[ ! -x bench/.venv/bin/python ]]; then
  python3 -m venv bench/.venv
  bench/.venv/bin/pip install -q -r bench/peer/requirements.txt
fi
mkdir -p "$data"
ulimit -n 20000 2>/dev/null || true
db_args=()
PEER_DATABASE="${PEER_DATABASE:-$BENCH_DATA/bench.sqlite}"
[[ -f "$PEER_DATABASE" ]] && db_args=(--database "$PEER_DATABASE")
taskset -c "$SERVER_CPU" bench/.venv/bin/python bench/peer/peer.py --port "$PEER_PORT" --data "$data" "${db_args[@]}" >"$data/peer.log" 2>&1 &
echo $! >"$pidfile"
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PEER_PORT/health" >/dev/null 2>&1 && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$PEER_PORT/health" >/dev/null || { echo "peer did not start; see $data/peer.log" >&2; exit 1; }
if [[ ${#db_args[@]} -gt 0 ]]; then
  for f in tokens post-ids roomy-token toggle-room toggle-elements; do cp "$(dirname "$PEER_DATABASE")/$f.txt" "$data/$f.txt"; done
  echo "interaction-state, my-rooms and toggle served from $PEER_DATABASE"
fi
echo "python-socketio peer pid $(cat "$pidfile") on http://127.0.0.1:$PEER_PORT (CPU $SERVER_CPU), data $data"
