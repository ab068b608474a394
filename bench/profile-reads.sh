#!/usr/bin/env bash
# bench/profile-reads.sh SCENARIO — instructions per my-rooms or interaction-state request, end to
# end, the way bench/profile-toggle.sh counts a toggle.
#
# Seeds a fresh database (`touchsync bench-seed`), runs `touchsync serve` under valgrind's
# callgrind with instrumentation OFF, warms up, turns it on, sends $REQUESTS requests over one
# keep-alive connection (curl), turns it off and dumps. Every thread of the server is counted
# (event loop, readers, writer), so the number is the whole cost of a request in the server:
# HTTP parse, token check, body, SQL, JSON bytes, send. Instructions are repeatable on a noisy
# shared machine; wall time is not (bench/run-reads.sh gives req/s and CPU µs per request).
#
#   SCENARIO                          my-rooms (the seeded user in 50 rooms) | interaction-state (50 ids,
#                                     random user of 1000)
#   BIN_TOUCHSYNC=path/to/touchsync   default $SCRATCH/release/touchsync, built with
#                                     `swift build -c release --static-swift-stdlib` (see profile-toggle.sh)
#   REQUESTS=300                      requests measured
#   CALLERS=N                         interaction-state's callers drawn from the first N seeded users
#                                     (default all 1000: most tokens are new to the server; 50: each is
#                                     used again, as an app user's token is)
#   OUT=bench/.data/profile-SCENARIO  where the callgrind file and the seed go
# Prints a RESULT line: {"scenario":…, "requests":…, "ok":…, "instructions":…, "instructions_per_request":…}
# and the top functions (callgrind_annotate, inclusive) into $OUT/annotate.txt.
source "$(dirname "$0")/lib.sh"
scenario="${1:?usage: bench/profile-reads.sh my-rooms|interaction-state}"
BIN_TOUCHSYNC="${BIN_TOUCHSYNC:-$BIN/touchsync}"
REQUESTS="${REQUESTS:-300}"
OUT="${OUT:-$BENCH_DATA/profile-$scenario}"
PORT="${PROFILE_PORT:-3912}"
callgrind_serve "$BIN_TOUCHSYNC" "$OUT" "$PORT"
# One curl config: $REQUESTS requests on one keep-alive connection (the same requests as bench/wrk/*.lua).
python3 - "$OUT" "$REQUESTS" "$PORT" "$scenario" >"$OUT/curl.cfg" <<'PY'
import json, os, random, sys
out, n, port, scenario = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
random.seed(14)
tokens = open(f"{out}/tokens.txt").read().split()
tokens = tokens[:int(os.environ.get("CALLERS") or len(tokens))]
roomy = open(f"{out}/roomy-token.txt").read().split()[0]
body = json.dumps({"postIds": open(f"{out}/post-ids.txt").read().split()}, separators=(",", ":"))
open(f"{out}/body.json", "w").write(body)
for i in range(n):
    if i: print("next")
    print('output = "/dev/null"')
    print('write-out = "%{http_code}\\n"')
    if scenario == "my-rooms":
        print(f'header = "Authorization: Bearer {roomy}"')
        print(f'url = "http://127.0.0.1:{port}/api/rooms/my-rooms"')
    else:
        print('request = "POST"')
        print(f'header = "Authorization: Bearer {random.choice(tokens)}"')
        print('header = "Content-Type: application/json"')
        print(f'data-binary = "@{out}/body.json"')
        print(f'url = "http://127.0.0.1:{port}/api/mobile/posts/interaction-state"')
PY
# Warm-up (statement caches, first allocations), not counted: the first 20 requests of the same list.
callgrind_requests "$OUT" "$scenario" "$REQUESTS" 20
