#!/usr/bin/env bash
# bench/profile-toggle.sh — instructions per REST reaction toggle, end to end.
#
# Seeds a fresh database (`touchsync bench-seed`, natively), then runs `touchsync serve` under
# valgrind's callgrind with instrumentation OFF; turns it on (`callgrind_control -i on`), sends
# $TOGGLES toggles (random user of 1000 × element of 100, curl), turns it off and dumps. With
# CLIENTS=1 (the default) they go one after the other on one keep-alive connection, so every
# toggle is a group commit of its own; with more, CLIENTS curl processes send them at once and the
# writer batches them, as under wrk's 64 connections. Every thread of the server is counted (event loop, reader and writer
# threads), so the number is the whole cost of a toggle in the server: parse, auth, SQL, fsync
# calls, response, the realtime publish. Instructions are repeatable on a noisy shared machine;
# wall time is not (use bench/run-http.sh toggle for req/s).
#
#   BIN_TOUCHSYNC=path/to/touchsync   the binary to profile (default: $SCRATCH/release/touchsync), built
#                                     with `swift build -c release --static-swift-stdlib`: valgrind 3.19
#                                     (Debian 12) dies in the shared libdispatch's dispatch_main, which
#                                     an async main reaches; the static one runs.
#   TOGGLES=400                       toggles measured
#   CLIENTS=1                         curl processes sending them at once
#   CALLERS=N                         callers drawn from the first N seeded users (default all 1000:
#                                     most tokens are new to the server; 50: each is used again)
#   OUT=bench/.data/profile           where the callgrind file and the seed go
# Prints a RESULT line: {"toggles":…, "instructions":…, "instructions_per_toggle":…}
# and the top functions (callgrind_annotate, inclusive) into $OUT/annotate.txt.
source "$(dirname "$0")/lib.sh"
BIN_TOUCHSYNC="${BIN_TOUCHSYNC:-$BIN/touchsync}"
TOGGLES="${TOGGLES:-400}"
CLIENTS="${CLIENTS:-1}"
OUT="${OUT:-$BENCH_DATA/profile}"
PORT="${PROFILE_PORT:-3911}"
callgrind_serve "$BIN_TOUCHSYNC" "$OUT" "$PORT"
toggle_curl_configs "$OUT" "$TOGGLES" "$PORT" "$CLIENTS"
# Warm-up (statement caches, first allocations), not counted.
curl -s -X POST -o /dev/null -H "Authorization: Bearer $(head -1 "$OUT/tokens.txt")" \
  "http://127.0.0.1:$PORT/api/rooms/$(head -1 "$OUT/toggle-room.txt")/elements/$(head -1 "$OUT/toggle-elements.txt")/reactions/toggle"
callgrind_control -i on "$vpid" >/dev/null
start=$(date +%s.%N)
send_curl_configs "$OUT" "$CLIENTS"
end=$(date +%s.%N)
ok=$(cat "$OUT"/codes.*.txt | grep -c '^200$' || true)
callgrind_finish "$OUT"
python3 - "$TOGGLES" "$ok" "$cg_total" "$start" "$end" "$CLIENTS" <<'PY'
import json, sys
n, ok, total, start, end = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
print("RESULT " + json.dumps({"toggles": n, "clients": int(sys.argv[6]), "ok": ok, "instructions": total, "instructions_per_toggle": round(total / max(n, 1)),
                              "seconds_under_valgrind": round(end - start, 2)}))
PY
