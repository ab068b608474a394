#!/usr/bin/env bash
# bench/profile-http.sh SCENARIO — instructions per request of the HTTP layer's smallest answers,
# end to end, the way bench/profile-reads.sh counts a read (callgrind, every server thread).
#
# `health` is the per-request cost before any application work (parse, route, the handler's
# run on the loop, encode, write, the access-log decision); `auth-me` adds the smallest
# authenticated read (bearer check, one user row, a small JSON body). Instructions are
# repeatable on a loaded machine; wall time is not (bench/run-http.sh gives req/s).
#
#   SCENARIO                          health (GET /health) | auth-me (GET /api/auth/me, a seeded user)
#   BIN_TOUCHSYNC=path/to/touchsync   default $SCRATCH/release/touchsync, a `--static-swift-stdlib`
#                                     release build (see profile-toggle.sh)
#   REQUESTS=1000                     requests measured, on one keep-alive connection (curl)
#   OUT=bench/.data/profile-SCENARIO  where the callgrind file and the seed go
# Prints a RESULT line: {"scenario":…, "requests":…, "ok":…, "instructions":…, "instructions_per_request":…}
# and the top functions (callgrind_annotate, inclusive) into $OUT/annotate.txt.
source "$(dirname "$0")/lib.sh"
scenario="${1:?usage: bench/profile-http.sh health|auth-me}"
BIN_TOUCHSYNC="${BIN_TOUCHSYNC:-$BIN/touchsync}"
REQUESTS="${REQUESTS:-1000}"
OUT="${OUT:-$BENCH_DATA/profile-$scenario}"
PORT="${PROFILE_PORT:-3913}"
callgrind_serve "$BIN_TOUCHSYNC" "$OUT" "$PORT"
python3 - "$OUT" "$REQUESTS" "$PORT" "$scenario" >"$OUT/curl.cfg" <<'PY'
import sys
out, n, port, scenario = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
token = open(f"{out}/tokens.txt").read().split()[0]
path = {"health": "/health", "auth-me": "/api/auth/me"}[scenario]
for i in range(n):
    if i: print("next")
    print('output = "/dev/null"')
    print('write-out = "%{http_code}\\n"')
    if scenario == "auth-me":
        print(f'header = "Authorization: Bearer {token}"')
    print(f'url = "http://127.0.0.1:{port}{path}"')
PY
# Warm-up (first allocations, statement caches), not counted: the first 50 requests of the list.
callgrind_requests "$OUT" "$scenario" "$REQUESTS" 50
