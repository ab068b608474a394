#!/usr/bin/env bash
# bench/run-reads.sh — my-rooms (user in 50 rooms) and interaction-state
# (50 ids) for several builds, in INTERLEAVED rounds (each round: every build on a freshly seeded
# server, then the aiohttp + sqlite3 peer for interaction-state), RUNS (default 5) rounds; prints
# per build and scenario the median, spread (min–max), load average and server CPU per request
# (bench/lib.sh `median_of`, summary appended to $BENCH_DATA/summary.jsonl).
#   BUILDS="base=/path/to/scratch after=.build-bench"  label=scratch pairs (the binary is SCRATCH/release/touchsync)
#   POLL_BUILDS="after"    builds also run with TOUCHSYNC_SERVER_POLLER=poll (label LABEL-poll)
#   SKIP_PEER=1            leaves the peer out
#   SCENARIOS="health toggle my-rooms interaction-state"   other bench/run-http.sh scenarios (default: the two reads)
source "$(dirname "$0")/lib.sh"
BUILDS="${BUILDS:-after=$SCRATCH}"
POLL_BUILDS="${POLL_BUILDS-}"
res="$BENCH_DATA/reads"
mkdir -p "$res"
rm -f "$res"/*.out
bench_context
variants=()
for b in $BUILDS; do
  variants+=("$b|auto")
  for p in $POLL_BUILDS; do [[ "${b%%=*}" == "$p" ]] && variants+=("$b|poll"); done
done
for round in $(seq "$RUNS"); do
  for v in "${variants[@]}"; do
    build="${v%%|*}"; poller="${v##*|}"; label="${build%%=*}"; [[ "$poller" == poll ]] && label="$label-poll"
    TOUCHSYNC_SERVER_POLLER="$poller" SCRATCH="${build#*=}" NO_BUILD=1 bench/server.sh start >/dev/null
    for s in ${SCENARIOS:-my-rooms interaction-state}; do
      RUNS=1 bench/run-http.sh "$s" | grep '^RESULT' | tee -a "$res/$label-$s.out" | sed "s/^/round $round $label $s: /"
    done
    bench/server.sh stop
  done
  if [[ -z "${SKIP_PEER:-}" ]]; then
    bench/run-peer.sh start >/dev/null   # reads the database the last server seeded
    BENCH_DATA=bench/.data-peer SERVER_PID="$(cat bench/.data-peer/peer.pid)" URL="http://127.0.0.1:${PEER_PORT:-3901}" \
      RUNS=1 bench/run-http.sh interaction-state | grep '^RESULT' | tee -a "$res/peer-interaction-state.out" | sed "s/^/round $round peer interaction-state: /"
    bench/run-peer.sh stop
  fi
done
for f in "$res"/*.out; do
  echo "== $(basename "$f" .out)"
  median_of "$f" "reads-$(basename "$f" .out)"
done
