#!/usr/bin/env bash
# bench/run-realtime.sh SCENARIO [touchsync-bench options...]
#   SCENARIO: fanout | fanout-global | join | reconnect   (see bench/README.md)
# The load tool (bench/touchsync-bench) runs pinned to CPU $LOAD_CPU against $URL, RUNS times
# (median printed). The server's RSS is read from $BENCH_DATA/server.pid (or PEER_PID for the peer).
source "$(dirname "$0")/lib.sh"
scenario="${1:?usage: bench/run-realtime.sh fanout|fanout-global|join|reconnect [options]}"
shift
if [[ -z "${NO_BUILD:-}" ]]; then
  swift build -c release --scratch-path "$SCRATCH" --product touchsync-bench >/dev/null
fi
pid="${PEER_PID:-$(cat "$BENCH_DATA/server.pid" 2>/dev/null || true)}"
pidopt=()
[[ -n "$pid" ]] && pidopt=(--server-pid "$pid")
case "$scenario" in
  fanout) args=(fanout) ;;
  fanout-global) args=(fanout --global) ;;
  join) args=(join) ;;
  reconnect) args=(reconnect) ;;
  *) echo "no such scenario: $scenario" >&2; exit 2 ;;
esac
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
out="$BENCH_DATA/rt-$scenario.out"
: >"$out"
for i in $(seq "$RUNS"); do
  taskset -c "$LOAD_CPU" "$BIN/touchsync-bench" "${args[@]}" --url "$URL" --data "$BENCH_DATA" "${pidopt[@]}" "$@" | tee -a "$out"
  sleep 1
done
echo "== $scenario $*"
median_of "$out"
