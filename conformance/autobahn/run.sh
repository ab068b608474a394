#!/bin/bash
# Runs the Autobahn|Testsuite fuzzing client (RFC 6455 conformance) against the conformance
# server's /echo endpoint and summarises the results.
#
# Usage: conformance/autobahn/run.sh [--tls] [CASES]  CASES: JSON list, default all of 1-7, 9, 10
#   --tls  the same cases over wss:// (docs/tls.md): the server gets --tls-cert/--tls-key from a CA
#          this script generates with the openssl CLI, and wstest verifies the server's chain
#          against that CA and its host name (wstest_tls.py; wstest alone verifies nothing). A
#          first check runs case 1.1.1 trusting another CA and requires the connection to fail.
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
TLS=0
if [ "${1:-}" = "--tls" ]; then TLS=1; shift; fi
CASES=${1:-'["1.*","2.*","3.*","4.*","5.*","6.*","7.*","9.*","10.*"]'}
case $SCRATCH in /*) ;; *) SCRATCH=$ROOT/$SCRATCH ;; esac
OUT=${REPORTS:-$SCRATCH/autobahn-reports}

if [ "$TLS" = 1 ] && [ -x "$AUTOBAHN_DIR/wstest" ] && [ ! -x "$AUTOBAHN_DIR/python2" ]; then
  # An install made before setup.sh wrote DIR/python2: the same interpreter line as its wstest wrapper.
  sed 's|^exec \("[^"]*"\) "[^"]*/wstest" |exec \1 |' "$AUTOBAHN_DIR/wstest" > "$AUTOBAHN_DIR/python2.tmp" \
    && chmod +x "$AUTOBAHN_DIR/python2.tmp" && "$AUTOBAHN_DIR/python2.tmp" -c "import autobahntestsuite" 2>/dev/null \
    && mv "$AUTOBAHN_DIR/python2.tmp" "$AUTOBAHN_DIR/python2" || rm -f "$AUTOBAHN_DIR/python2.tmp"
fi
if [ ! -x "$AUTOBAHN_DIR/wstest" ] || { [ "$TLS" = 1 ] && [ ! -x "$AUTOBAHN_DIR/python2" ]; }; then
  bash "$ROOT/conformance/autobahn/setup.sh" "$AUTOBAHN_DIR"
fi

# Release build: the 9.x cases push 16 MiB messages through the codec.
if [ -n "${SERVER_BIN:-}" ]; then
  BIN=$SERVER_BIN
else
  swift build -c release --scratch-path "$SCRATCH" --product conformance-server
  BIN=$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)/conformance-server
fi

WORK=$(mktemp -d)
SERVER_FLAGS=()
URL="ws://127.0.0.1:$PORT/echo"
WSTEST=("$AUTOBAHN_DIR/wstest")
if [ "$TLS" = 1 ]; then
  # A throwaway CA and a server certificate for localhost / 127.0.0.1 (P-256), and a second CA
  # that did not sign it (for the check that verification is on).
  command -v openssl >/dev/null || { echo "autobahn --tls: the openssl CLI is missing" >&2; exit 1; }
  ossl() { openssl "$@" >/dev/null 2>&1; }
  for ca in ca other-ca; do
    ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$WORK/$ca.key" -out "$WORK/$ca.pem" \
      -days 2 -subj "/CN=TouchSync Autobahn $ca" -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign"
  done
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n' > "$WORK/server.ext"
  ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$WORK/server.key" -out "$WORK/server.csr" -subj "/CN=localhost"
  ossl x509 -req -in "$WORK/server.csr" -CA "$WORK/ca.pem" -CAkey "$WORK/ca.key" -CAcreateserial -out "$WORK/server.pem" \
    -days 2 -extfile "$WORK/server.ext"
  # notice: the server logs each TLS connection it closes, and why (the other-CA check reads it).
  SERVER_FLAGS=(--tls-cert "$WORK/server.pem" --tls-key "$WORK/server.key" --log-level notice)
  URL="wss://localhost:$PORT/echo"
  WSTEST=("$AUTOBAHN_DIR/python2" "$ROOT/conformance/autobahn/wstest_tls.py")
  OUT=${REPORTS:-$SCRATCH/autobahn-reports-tls}
fi

"$BIN" --port "$PORT" "${SERVER_FLAGS[@]}" > "$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
  sleep 0.1
done

spec() {  # spec FILE OUTDIR CASES
  cat > "$1" <<JSON
{"options": {"failByDrop": true}, "outdir": "$2",
 "servers": [{"agent": "touchsync", "url": "$URL"}],
 "cases": $3, "exclude-cases": ["12.*", "13.*"], "exclude-agent-cases": {}}
JSON
}

if [ "$TLS" = 1 ]; then
  # Verification is real: trusting only the other CA, wstest must not get through the handshake
  # (no case result, or not OK), and it must say why.
  spec "$WORK/spec-other-ca.json" "$WORK/other-ca-reports" '["1.1.1"]'
  (cd "$WORK" && AUTOBAHN_CA="$WORK/other-ca.pem" "${WSTEST[@]}" -m fuzzingclient -s spec-other-ca.json) > "$WORK/wstest-other-ca.log" 2>&1 || true
  if python3 - "$WORK/other-ca-reports/index.json" <<'PY'
import json, sys
try:
    case = json.load(open(sys.argv[1]))["touchsync"]["1.1.1"]
except (OSError, ValueError, KeyError):
    sys.exit(1)  # no result: the connection failed, as it must
sys.exit(0 if case["behavior"] == "OK" else 1)
PY
  then
    echo "autobahn --tls: wstest passed case 1.1.1 while trusting another CA: certificate verification is off" >&2
    cat "$WORK/wstest-other-ca.log" >&2
    exit 1
  fi
  # The server saw the client's alert (an unknown CA) on its side of the failed handshake.
  if ! grep -i "TLS connection closed" "$WORK/server.log" | grep -qi "unknown ca\|certificate"; then
    echo "autobahn --tls: the server logged no refused handshake for the other-CA client" >&2
    cat "$WORK/wstest-other-ca.log" "$WORK/server.log" >&2
    exit 1
  fi
  echo "autobahn --tls: trusting another CA, wstest's handshake failed as it must; server: $(grep -i 'TLS connection closed' "$WORK/server.log" | head -1 | cut -c1-200)"
  export AUTOBAHN_CA="$WORK/ca.pem"
fi

spec "$WORK/spec.json" "$OUT" "$CASES"
rm -rf "$OUT"
(cd "$WORK" && "${WSTEST[@]}" -m fuzzingclient -s spec.json) > "$WORK/wstest.log" 2>&1 || true

status=0
python3 - "$OUT/index.json" <<'PY' || status=$?
import json, sys, collections
try:
    cases = json.load(open(sys.argv[1]))["touchsync"]
except (OSError, ValueError, KeyError) as e:
    print("no Autobahn report (%s): wstest could not run or connect" % e)
    sys.exit(1)
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
if [ "$status" -ne 0 ]; then
  echo "--- wstest log (last 20 lines) ---"; tail -20 "$WORK/wstest.log"
  echo "--- server log (last 20 lines) ---"; tail -20 "$WORK/server.log"
fi
exit "$status"
