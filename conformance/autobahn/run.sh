#!/bin/bash
# Runs the Autobahn|Testsuite fuzzing client (RFC 6455 conformance) against the conformance
# server's /echo endpoint and summarises the results.
#
# Usage: conformance/autobahn/run.sh [CASES]          CASES: JSON list, default all of 1-7, 9, 10
# Env:   AUTOBAHN_DIR   wstest install (default /tmp/autobahn; set up by
#                       conformance/autobahn/setup.sh if missing)
#        SCRATCH        SwiftPM scratch path (default .build-autobahn)
#        PORT           port for the server (default: a free one)
#        SERVER_BIN     an already built conformance-server to use instead of building one
#        REPORTS        report directory (default $SCRATCH/autobahn-reports)
# Exit status: 0 when every case is OK / NON-STRICT / INFORMATIONAL and every close behaviour
# OK / INFORMATIONAL, 1 otherwise. Reports: $REPORTS (default $SCRATCH/autobahn-reports/), index.html/json.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
AUTOBAHN_DIR=${AUTOBAHN_DIR:-/tmp/autobahn}
SCRATCH=${SCRATCH:-.build-autobahn}
PORT=${PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
CASES=${1:-'["1.*","2.*","3.*","4.*","5.*","6.*","7.*","9.*","10.*"]'}
case $SCRATCH in /*) ;; *) SCRATCH=$ROOT/$SCRATCH ;; esac
OUT=${REPORTS:-$SCRATCH/autobahn-reports}

if [ ! -x "$AUTOBAHN_DIR/wstest" ]; then
  bash "$ROOT/conformance/autobahn/setup.sh" "$AUTOBAHN_DIR"
fi

# Release build: the 9.x cases push 16 MiB messages through the codec.
if [ -n "${SERVER_BIN:-}" ]; then
  BIN=$SERVER_BIN
else
  swift build -c release --scratch-path "$SCRATCH" --product conformance-server
  BIN=$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)/conformance-server
fi

"$BIN" --port "$PORT" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
  sleep 0.1
done

WORK=$(mktemp -d)
cat > "$WORK/spec.json" <<JSON
{"options": {"failByDrop": true}, "outdir": "$OUT",
 "servers": [{"agent": "touchsync", "url": "ws://127.0.0.1:$PORT/echo"}],
 "cases": $CASES, "exclude-cases": ["12.*", "13.*"], "exclude-agent-cases": {}}
JSON
rm -rf "$OUT"
(cd "$WORK" && "$AUTOBAHN_DIR/wstest" -m fuzzingclient -s spec.json) > "$WORK/wstest.log" 2>&1 || true

python3 - "$OUT/index.json" <<'PY'
import json, sys, collections
cases = json.load(open(sys.argv[1]))["touchsync"]
behavior = collections.Counter(c["behavior"] for c in cases.values())
close = collections.Counter(c["behaviorClose"] for c in cases.values())
print("cases:", len(cases))
print("behavior:", dict(behavior))
print("behaviorClose:", dict(close))
bad = sorted((k for k, c in cases.items()
              if c["behavior"] not in ("OK", "NON-STRICT", "INFORMATIONAL")
              or c["behaviorClose"] not in ("OK", "INFORMATIONAL")),
             key=lambda k: [int(x) for x in k.split(".")])
for k in bad:
    print("  FAIL", k, cases[k]["behavior"], cases[k]["behaviorClose"])
sys.exit(1 if bad else 0)
PY
