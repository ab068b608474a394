#!/usr/bin/env bash
# bench/profile-toggle.sh — instructions per REST reaction toggle, end to end (issue 14 item 1).
#
# Seeds a fresh database (`touchsync bench-seed`, natively), then runs `touchsync serve` under
# valgrind's callgrind with instrumentation OFF; turns it on (`callgrind_control -i on`), sends
# $TOGGLES toggles (random user of 1000 × element of 100, one keep-alive connection, curl), turns
# it off and dumps. Every thread of the server is counted (event loop, reader and writer
# threads), so the number is the whole cost of a toggle in the server: parse, auth, SQL, fsync
# calls, response, the realtime publish. Instructions are repeatable on a noisy shared machine;
# wall time is not (use bench/run-http.sh toggle for req/s).
#
#   BIN_TOUCHSYNC=path/to/touchsync   the binary to profile (default: $SCRATCH/release/touchsync), built
#                                     with `swift build -c release --static-swift-stdlib`: valgrind 3.19
#                                     (Debian 12) dies in the shared libdispatch's dispatch_main, which
#                                     an async main reaches; the static one runs.
#   TOGGLES=400                       toggles measured
#   OUT=bench/.data/profile           where the callgrind file and the seed go
# Prints a RESULT line: {"toggles":…, "instructions":…, "instructions_per_toggle":…}
# and the top functions (callgrind_annotate, inclusive) into $OUT/annotate.txt.
source "$(dirname "$0")/lib.sh"
BIN_TOUCHSYNC="${BIN_TOUCHSYNC:-$BIN/touchsync}"
TOGGLES="${TOGGLES:-400}"
OUT="${OUT:-$BENCH_DATA/profile}"
PORT="${PROFILE_PORT:-3911}"
command -v valgrind >/dev/null || { echo "profile-toggle: valgrind is not installed" >&2; exit 2; }
rm -rf "$OUT"; mkdir -p "$OUT"
db="$OUT/bench.sqlite"
export TOUCHSYNC_DATABASE_SYNCHRONOUS="${SYNC:-FULL}"
"$BIN_TOUCHSYNC" bench-seed --database "$db" --out "$OUT" --log-level warning 2>"$OUT/seed.log"
cg="$OUT/callgrind.out"
# valgrind 3.19 (Debian 12) cannot read the DWARF 5 the Swift toolchain emits: profile a copy
# without debug info (the symbol table stays, so functions keep their names).
objcopy --strip-debug "$BIN_TOUCHSYNC" "$OUT/touchsync"
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$cg" \
  "$OUT/touchsync" serve --port "$PORT" --database "$db" --log-level warning >"$OUT/server.log" 2>&1 &
vpid=$!
trap 'kill -TERM $vpid 2>/dev/null || true' EXIT
for _ in $(seq 600); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break; sleep 0.2; done
curl -sf "http://127.0.0.1:$PORT/health" >/dev/null || { echo "server did not start under valgrind; see $OUT/server.log" >&2; exit 1; }
# One curl process, one keep-alive connection, $TOGGLES requests (a curl config file).
python3 - "$OUT" "$TOGGLES" "$PORT" >"$OUT/curl.cfg" <<'PY'
import random, sys
out, n, port = sys.argv[1], int(sys.argv[2]), sys.argv[3]
tokens = open(f"{out}/tokens.txt").read().split()
elements = open(f"{out}/toggle-elements.txt").read().split()
room = open(f"{out}/toggle-room.txt").read().split()[0]
random.seed(14)
for i in range(n):
    if i: print("next")
    print('request = "POST"')
    print(f'header = "Authorization: Bearer {random.choice(tokens)}"')
    print('output = "/dev/null"')
    print('write-out = "%{http_code}\\n"')
    print(f'url = "http://127.0.0.1:{port}/api/rooms/{room}/elements/{random.choice(elements)}/reactions/toggle"')
PY
# Warm-up (statement caches, first allocations), not counted.
curl -s -X POST -o /dev/null -H "Authorization: Bearer $(head -1 "$OUT/tokens.txt")" \
  "http://127.0.0.1:$PORT/api/rooms/$(head -1 "$OUT/toggle-room.txt")/elements/$(head -1 "$OUT/toggle-elements.txt")/reactions/toggle"
callgrind_control -i on "$vpid" >/dev/null
start=$(date +%s.%N)
curl -s -K "$OUT/curl.cfg" >"$OUT/codes.txt"
end=$(date +%s.%N)
callgrind_control -i off "$vpid" >/dev/null
callgrind_control -d "$vpid" >/dev/null
ok=$(grep -c '^200$' "$OUT/codes.txt" || true)
kill -TERM "$vpid"; wait "$vpid" 2>/dev/null || true
trap - EXIT
files=$(ls "$cg"* 2>/dev/null)
total=0
for f in $files; do
  n=$(grep -m1 '^totals:' "$f" | awk '{print $2}')
  total=$((total + ${n:-0}))
done
callgrind_annotate --inclusive=yes $files 2>/dev/null | head -80 >"$OUT/annotate.txt" || true
python3 - "$TOGGLES" "$ok" "$total" "$start" "$end" <<'PY'
import json, sys
n, ok, total, start, end = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
print("RESULT " + json.dumps({"toggles": n, "ok": ok, "instructions": total, "instructions_per_toggle": round(total / max(n, 1)),
                              "seconds_under_valgrind": round(end - start, 2)}))
PY
