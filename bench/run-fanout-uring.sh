#!/usr/bin/env bash
# bench/run-fanout-uring.sh — the fan-out of REST creations to N sockets
# (`touchsync-bench fanout`, bench/README.md) with the event loops' io_uring write path
# (`server.ioUring = auto`) against one send(2) per socket (`off`), in INTERLEAVED rounds: each
# round runs every variant once per socket count, each on a freshly seeded server pinned to
# $SERVER_CPU (one event loop), the tool pinned to $LOAD_CPU. $RUNS rounds (default 5); prints per
# variant and size the median, spread and load average of every field (bench/lib.sh `median_of`).
#   VARIANTS="off=.build-bench|off uring=.build-bench|auto"   label=scratch|server.ioUring
#            (add e.g. "main=/tmp/main-build|-" to run another build, its binary SCRATCH/release/touchsync;
#            "-" leaves TOUCHSYNC_SERVER_IO_URING unset, for a build that predates the setting)
#   SOCKETS="1000 5000"   1000 sockets: 40 creations at 10/s; 5000: 20 at 4/s (the Fan-out section's method)
source "$(dirname "$0")/lib.sh"
VARIANTS="${VARIANTS:-off=$SCRATCH|off uring=$SCRATCH|auto}"
SOCKETS="${SOCKETS:-1000 5000}"
res="$BENCH_DATA/fanout-uring"
mkdir -p "$res"
rm -f "$res"/*.out
bench_context
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
for round in $(seq "$RUNS"); do
  for n in $SOCKETS; do
    if [[ "$n" -ge 5000 ]]; then load=(--events 20 --rate 4); else load=(--events 40 --rate 10); fi
    for v in $VARIANTS; do
      build="${v%%|*}"; mode="${v##*|}"; label="${build%%=*}"
      if [[ "$mode" == "-" ]]; then
        env -u TOUCHSYNC_SERVER_IO_URING SCRATCH="${build#*=}" NO_BUILD=1 bench/server.sh start >/dev/null
      else
        TOUCHSYNC_SERVER_IO_URING="$mode" SCRATCH="${build#*=}" NO_BUILD=1 bench/server.sh start >/dev/null
      fi
      taskset -c "$LOAD_CPU" "$BIN/touchsync-bench" fanout --url "$URL" --data "$BENCH_DATA" \
          --server-pid "$(cat "$BENCH_DATA/server.pid")" --sockets "$n" "${load[@]}" \
        | with_load | grep '^RESULT' | tee -a "$res/$label-$n.out" | sed "s/^/round $round $label $n: /"
      grep -h "io_uring" "$BENCH_DATA/server.log" | head -1 || true   # the refusal line, if any
      bench/server.sh stop
    done
  done
done
for f in "$res"/*.out; do
  echo "== $(basename "$f" .out)"
  median_of "$f" "fanout-uring-$(basename "$f" .out)"
done
