#!/usr/bin/env bash
# bench/profile-fanout.sh — instructions per delivered broadcast frame (one event to one socket),
# server side, under callgrind.
#
# Runs `touchsync-bench fanout` (sockets joined to the fan-out room, element creations over REST,
# each broadcast `element:created` to every socket) against `touchsync serve` under callgrind
# (`callgrind_serve`: fresh seed, every thread counted) for the four corners of
# {SOCKETS_LO, SOCKETS_HI} × {EVENTS_LO, EVENTS_HI}, each on a fresh server. The total of a run
# is  a + b·sockets + c·events + d·sockets·events  (start-up, connects and joins, creations and
# their SQL, fan-out); the mixed difference of the four corners is d, the fan-out cost of one
# event to one socket, with the creations (and the tool's warm-up) cancelled out. Counting starts
# once the sockets are ready. Instructions are repeatable on a loaded machine; wall time is not.
#
#   BIN_TOUCHSYNC=path/to/touchsync   the server profiled (built `swift build -c release --static-swift-stdlib`,
#                                     see profile-toggle.sh for why static); default $SCRATCH/release/touchsync
#   BIN_BENCH=path/to/touchsync-bench the load tool, run natively (default $SCRATCH/release/touchsync-bench)
#   SOCKETS_LO=20 SOCKETS_HI=100 EVENTS_LO=5 EVENTS_HI=25
#   OUT=bench/.data/profile-fanout
# Prints one RESULT line: {"instructions_per_delivery":…, "corners":{…}}.
source "$(dirname "$0")/lib.sh"
BIN_TOUCHSYNC="${BIN_TOUCHSYNC:-$BIN/touchsync}"
BIN_BENCH="${BIN_BENCH:-$BIN/touchsync-bench}"
SOCKETS_LO="${SOCKETS_LO:-20}"; SOCKETS_HI="${SOCKETS_HI:-100}"
EVENTS_LO="${EVENTS_LO:-5}"; EVENTS_HI="${EVENTS_HI:-25}"
OUT="${OUT:-$BENCH_DATA/profile-fanout}"
PORT="${PROFILE_PORT:-3912}"
[[ -x "$BIN_BENCH" ]] || { echo "$(basename "$0"): $BIN_BENCH is missing (swift build -c release --product touchsync-bench)" >&2; exit 2; }
declare -A total
for s in "$SOCKETS_LO" "$SOCKETS_HI"; do
  for e in "$EVENTS_LO" "$EVENTS_HI"; do
    dir="$OUT/s$s-e$e"
    callgrind_serve "$BIN_TOUCHSYNC" "$dir" "$PORT"
    # Closed loop, one creation at a time: each is delivered to every socket before the next.
    # Counting starts once every socket is connected and joined: connects under valgrind on a
    # loaded machine time out and retry a varying number of times, which no corner should see.
    stdbuf -oL "$BIN_BENCH" fanout --url "http://127.0.0.1:$PORT" --data "$dir" --sockets "$s" --events "$e" --rate 0 --concurrency 1 \
      >"$dir/bench.out" 2>&1 &
    bpid=$!
    until grep -q "sockets ready" "$dir/bench.out" 2>/dev/null; do
      kill -0 "$bpid" 2>/dev/null || { echo "touchsync-bench ended before its sockets were ready; see $dir/bench.out" >&2; exit 1; }
      sleep 0.1
    done
    callgrind_control -i on "$vpid" >/dev/null
    wait "$bpid" || { echo "touchsync-bench failed; see $dir/bench.out" >&2; exit 1; }
    callgrind_finish "$dir"
    total["s$s-e$e"]=$cg_total
    echo "sockets=$s events=$e instructions=$cg_total"
  done
done
lo_lo=${total["s$SOCKETS_LO-e$EVENTS_LO"]}; lo_hi=${total["s$SOCKETS_LO-e$EVENTS_HI"]}
hi_lo=${total["s$SOCKETS_HI-e$EVENTS_LO"]}; hi_hi=${total["s$SOCKETS_HI-e$EVENTS_HI"]}
python3 - "$lo_lo" "$lo_hi" "$hi_lo" "$hi_hi" "$SOCKETS_LO" "$SOCKETS_HI" "$EVENTS_LO" "$EVENTS_HI" <<'PY'
import json, sys
ll, lh, hl, hh = map(int, sys.argv[1:5])
slo, shi, elo, ehi = map(int, sys.argv[5:9])
d = (hh - hl - lh + ll) / ((shi - slo) * (ehi - elo))
print("RESULT " + json.dumps({"instructions_per_delivery": round(d), "corners": {
    f"s{slo}-e{elo}": ll, f"s{slo}-e{ehi}": lh, f"s{shi}-e{elo}": hl, f"s{shi}-e{ehi}": hh}}))
PY
