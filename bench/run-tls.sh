#!/usr/bin/env bash
# bench/run-tls.sh — the cost of TouchSync's own TLS (issue 15 §7), in one run on one machine:
#   1. GET /health with keep-alive over plain HTTP and over HTTPS (wrk, the health scenario);
#   2. new TLS handshakes per second (`openssl s_time -new`, full handshakes, no resumption) and
#      resumed ones (`-reuse`);
#   3. the same over nginx terminating TLS in front of the plain server, as the reference (only
#      when `nginx` is installed; otherwise said so).
# The server (release build, or BIN=... any touchsync binary) is pinned to CPU $SERVER_CPU,
# the load to $LOAD_CPU. Certificates: `touchsync cert` into $BENCH_DATA/tls (P-256 ECDSA).
# RUNS=5 for recorded numbers. Run from the repository root.
source "$(dirname "$0")/lib.sh"
TLS_PORT="${TLS_PORT:-3943}"
PLAIN_PORT="${PLAIN_PORT:-3980}"
NGINX_PORT="${NGINX_PORT:-3944}"
DURATION="${DURATION:-10s}"
TOUCHSYNC="${BIN_TOUCHSYNC:-}"
if [[ -z "$TOUCHSYNC" ]]; then
  if [[ "${NO_BUILD:-0}" != "1" ]]; then swift build -c release --scratch-path "$SCRATCH" --product touchsync; fi
  TOUCHSYNC="$BIN/touchsync"
fi
mkdir -p "$BENCH_DATA"
"$TOUCHSYNC" cert --directory "$BENCH_DATA/tls" >/dev/null
CERT="$BENCH_DATA/tls/server.pem" KEY="$BENCH_DATA/tls/server.key"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

start() {  # start NAME PORT [serve flags...]
  local name=$1 port=$2; shift 2
  rm -rf "$BENCH_DATA/tls-$name-db"
  TOUCHSYNC_JWT_SECRET=bench-secret-0123456789abcdef taskset -c "$SERVER_CPU" "$TOUCHSYNC" serve --port "$port" \
    --database "$BENCH_DATA/tls-$name-db/db.sqlite" --log-level warning "$@" >"$BENCH_DATA/tls-$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0; sleep 0.1; done
  echo "server $name did not start: $(cat "$BENCH_DATA/tls-$name.log")" >&2; exit 1
}

health() {  # health LABEL URL
  local out="$BENCH_DATA/tls-health-$1.out"; : >"$out"
  for i in $(seq "$RUNS"); do
    taskset -c "$LOAD_CPU" wrk -t"${THREADS:-2}" -c"${CONNECTIONS:-64}" -d"$DURATION" --latency -s bench/wrk/health.lua "$2" \
      | tee -a "$out" | grep -E "Requests/sec|Non-2xx|Socket errors" || true
  done
  echo "== /health keep-alive, $1"; median_of "$out"
}

handshakes() {  # handshakes LABEL PORT
  for mode in new reuse; do
    local out="$BENCH_DATA/tls-handshakes-$1-$mode.out"; : >"$out"
    for i in $(seq "$RUNS"); do
      taskset -c "$LOAD_CPU" openssl s_time -connect "127.0.0.1:$2" -"$mode" -time "${HANDSHAKE_SECONDS:-5}" 2>/dev/null \
        | awk '/real seconds/ && $4 > 0 { printf "RESULT {\"connections_per_s\": %.1f}\n", $1 / $4 }' | tee -a "$out"
    done
    echo "== TLS handshakes ($mode), $1"; median_of "$out"
  done
}

start plain "$PLAIN_PORT"
start tls "$TLS_PORT" --tls-cert "$CERT" --tls-key "$KEY"
health "plain http" "http://127.0.0.1:$PLAIN_PORT"
health "https (touchsync TLS)" "https://127.0.0.1:$TLS_PORT"
handshakes "touchsync" "$TLS_PORT"

if command -v nginx >/dev/null 2>&1; then
  conf="$ROOT/$BENCH_DATA/tls-nginx.conf"
  cat >"$conf" <<NGINX
worker_processes 1;
pid $ROOT/$BENCH_DATA/tls-nginx.pid;
error_log $ROOT/$BENCH_DATA/tls-nginx-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  upstream touchsync { server 127.0.0.1:$PLAIN_PORT; keepalive 64; }
  server {
    listen 127.0.0.1:$NGINX_PORT ssl;
    ssl_certificate $ROOT/$CERT; ssl_certificate_key $ROOT/$KEY;
    ssl_protocols TLSv1.2 TLSv1.3;
    location / { proxy_pass http://touchsync; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
NGINX
  taskset -c "$SERVER_CPU" nginx -c "$conf" -g "daemon off;" &
  pids+=($!)
  sleep 1
  health "https (nginx terminating TLS -> plain touchsync, same CPU)" "https://127.0.0.1:$NGINX_PORT"
  handshakes "nginx" "$NGINX_PORT"
else
  echo "== nginx reference: skipped (nginx is not installed: apt-get install nginx-light)"
fi
