#!/usr/bin/env bash
# bench/run-tls.sh — the cost of TouchSync's own TLS, in one run on one machine:
#   1. GET /health with keep-alive over plain HTTP and over HTTPS (wrk, the health scenario);
#   2. new TLS connections per second: wrk with `Connection: close` (64 concurrent clients, each
#      request on a new connection with a full handshake: wrk resumes no session; plain HTTP the
#      same way as the baseline), and `openssl s_time` (one sequential client: `-new` full
#      handshakes, `-reuse` resumed ones; latency-bound, not a throughput figure);
#   3. the same over nginx terminating TLS in front of the plain server, as the reference (only
#      when `nginx` is installed; otherwise said so), with TouchSync's protocols, suites and
#      groups, and the same certificate; the negotiated protocol/suite of both is printed;
#   4. the CPU cost of TLS on the REST fan-out path: server CPU per element:created delivered
#      over wss vs ws (FANOUT=0 skips; needs nginx's stream module, see below).
# Step 4: touchsync-bench (the fan-out load tool) speaks plain ws/http only, so an nginx
# `stream` proxy on the load CPU originates the TLS (proxy_ssl, verifying the CA): the bench's
# sockets and REST creations reach the server as real TLS connections. The ws run goes through
# the same proxy without proxy_ssl, so the two differ only in the server's TLS. The server's CPU
# (utime+stime, /proc/PID/stat) is read around a short and a long run of the fanout scenario on
# one seeded database; the difference over the extra deliveries is the marginal CPU per delivery
# (connection set-up and handshakes cancel out).
# The server (release build, or BIN=... any touchsync binary) is pinned to CPU $SERVER_CPU,
# the load to $LOAD_CPU. Certificates: `touchsync cert` into $BENCH_DATA/tls (P-256 ECDSA).
# RUNS=5 for recorded numbers. HEALTH=0 runs only step 4, FANOUT=0 skips it; FANOUT_SOCKETS,
# FANOUT_RATE, FANOUT_EVENTS_SHORT/LONG size it. Run from the repository root.
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
BENCH_TOOL="${BIN_BENCH:-}"
if [[ -z "$BENCH_TOOL" && "${FANOUT:-1}" = "1" ]]; then
  if [[ "${NO_BUILD:-0}" != "1" ]]; then swift build -c release --scratch-path "$SCRATCH" --product touchsync-bench; fi
  BENCH_TOOL="$BIN/touchsync-bench"
fi
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), load average $(cut -d' ' -f1-3 /proc/loadavg), RUNS=$RUNS"
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

newconns() {  # newconns LABEL URL: a new connection (and TLS handshake) per request
  local out="$BENCH_DATA/tls-newconn-$1.out"; : >"$out"
  for i in $(seq "$RUNS"); do
    taskset -c "$LOAD_CPU" wrk -t"${THREADS:-2}" -c"${CONNECTIONS:-64}" -d"$DURATION" --latency -H "Connection: close" \
      -s bench/wrk/health.lua "$2" | tee -a "$out" | grep -E "Requests/sec|Non-2xx|Socket errors" || true
  done
  echo "== new connection per request (Connection: close), $1"; median_of "$out"
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

CIPHERS12="ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305"
CIPHERS13="TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
negotiated() {  # negotiated LABEL PORT: the protocol and suite an OpenSSL client gets
  echo "== negotiated, $1: $(openssl s_client -connect "127.0.0.1:$2" -servername localhost -CAfile "$BENCH_DATA/tls/ca.pem" -brief </dev/null 2>&1 \
    | grep -E '^(Protocol version|Ciphersuite|Verification|Peer signature type)' | tr '\n' ' ')"
}

if [[ "${HEALTH:-1}" = "1" ]]; then  # steps 1-3 (HEALTH=0: only the fan-out step)
start plain "$PLAIN_PORT"
start tls "$TLS_PORT" --tls-cert "$CERT" --tls-key "$KEY"
health "plain http" "http://127.0.0.1:$PLAIN_PORT"
health "https (touchsync TLS)" "https://127.0.0.1:$TLS_PORT"
negotiated "touchsync" "$TLS_PORT"
newconns "plain http" "http://127.0.0.1:$PLAIN_PORT"
newconns "https (touchsync TLS)" "https://127.0.0.1:$TLS_PORT"
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
    # TouchSync's policy (TLSContext.swift): protocols, Mozilla intermediate suites, groups.
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_ciphers $CIPHERS12;
    ssl_conf_command Ciphersuites $CIPHERS13;
    ssl_ecdh_curve X25519:prime256v1:secp384r1;
    ssl_session_cache shared:tls:10m;
    location / { proxy_pass http://touchsync; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
NGINX
  taskset -c "$SERVER_CPU" nginx -c "$conf" -g "daemon off;" &
  pids+=($!)
  sleep 1
  negotiated "nginx" "$NGINX_PORT"
  health "https (nginx terminating TLS -> plain touchsync, same CPU)" "https://127.0.0.1:$NGINX_PORT"
  newconns "https (nginx terminating TLS -> plain touchsync, same CPU)" "https://127.0.0.1:$NGINX_PORT"
  handshakes "nginx" "$NGINX_PORT"
else
  echo "== nginx reference: skipped (nginx is not installed: apt-get install nginx-light)"
fi
fi  # HEALTH

# ---- 4. CPU cost of TLS on the REST fan-out path (wss vs ws) -------------------------------------
STREAM_MODULE="${NGINX_STREAM_MODULE:-/usr/lib/nginx/modules/ngx_stream_module.so}"
if [[ "${FANOUT:-1}" != "1" ]]; then
  echo "== fan-out over wss vs ws: skipped (FANOUT=0)"
elif ! command -v nginx >/dev/null 2>&1 || [[ ! -f "$STREAM_MODULE" ]]; then
  echo "== fan-out over wss vs ws: skipped (needs nginx and its stream module: apt-get install nginx libnginx-mod-stream)"
else
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; pids=(); sleep 1
  FAN_PORT="${FAN_PORT:-3945}" PROXY_PORT="${PROXY_PORT:-3946}"
  SOCKETS="${FANOUT_SOCKETS:-1000}" RATE="${FANOUT_RATE:-100}"
  SHORT="${FANOUT_EVENTS_SHORT:-100}" LONG="${FANOUT_EVENTS_LONG:-600}"
  FDATA="$BENCH_DATA/tls-fanout"
  rm -rf "$FDATA"; mkdir -p "$FDATA"
  db="$FDATA/bench.sqlite"
  "$TOUCHSYNC" bench-seed --database "$db" --out "$FDATA" --log-level warning 2>"$FDATA/seed.log"
  ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
  TICK=$(getconf CLK_TCK)
  cpu_seconds() { awk -v t="$TICK" '{ printf "%.3f", ($14 + $15) / t }' "/proc/$1/stat"; }

  fanout_mode() {  # fanout_mode ws|wss
    local mode=$1 flags=() ssl=""
    if [[ $mode == wss ]]; then
      flags=(--tls-cert "$CERT" --tls-key "$KEY")
      ssl="proxy_ssl on; proxy_ssl_verify on; proxy_ssl_trusted_certificate $ROOT/$BENCH_DATA/tls/ca.pem;
    proxy_ssl_name localhost; proxy_ssl_server_name on; proxy_ssl_session_reuse on;"
    fi
    TOUCHSYNC_DATABASE_SYNCHRONOUS="${SYNC:-FULL}" TOUCHSYNC_SERVER_MAX_CONNECTIONS=20000 \
    TOUCHSYNC_SERVER_MAX_CONNECTIONS_PER_ADDRESS=0 TOUCHSYNC_REALTIME_MAX_UNCONNECTED_SESSIONS_PER_ADDRESS=0 TOUCHSYNC_SERVER_EVENT_LOOPS="${EVENT_LOOPS:-0}" \
      taskset -c "$SERVER_CPU" "$TOUCHSYNC" serve --port "$FAN_PORT" --database "$db" --log-level warning "${flags[@]}" \
      >"$FDATA/server-$mode.log" 2>&1 &
    local server=$!
    pids+=("$server")
    local conf="$ROOT/$FDATA/nginx-$mode.conf"
    cat >"$conf" <<NGINX
load_module $STREAM_MODULE;
worker_processes 1;
worker_rlimit_nofile 20000;
pid $ROOT/$FDATA/nginx-$mode.pid;
error_log $ROOT/$FDATA/nginx-$mode-error.log;
events { worker_connections 10000; }
stream {
  server {
    listen 127.0.0.1:$PROXY_PORT;
    proxy_pass 127.0.0.1:$FAN_PORT;
    $ssl
  }
}
NGINX
    taskset -c "$LOAD_CPU" nginx -c "$conf" -g "daemon off;" &
    local proxy=$!
    pids+=("$proxy")
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PROXY_PORT/health" >/dev/null 2>&1 && break; sleep 0.1; done
    curl -sf "http://127.0.0.1:$PROXY_PORT/health" >/dev/null || { echo "fan-out $mode: server or proxy did not start" >&2; cat "$FDATA/server-$mode.log" >&2; exit 1; }
    local out="$BENCH_DATA/tls-fanout-$mode.out"; : >"$out"
    for i in $(seq "$RUNS"); do
      local c0 c1 c2 r
      c0=$(cpu_seconds "$server")
      taskset -c "$LOAD_CPU" "$BENCH_TOOL" fanout --sockets "$SOCKETS" --events "$SHORT" --rate "$RATE" \
        --url "http://127.0.0.1:$PROXY_PORT" --data "$FDATA" >"$FDATA/short-$mode-$i.txt"
      c1=$(cpu_seconds "$server")
      sleep 1
      taskset -c "$LOAD_CPU" "$BENCH_TOOL" fanout --sockets "$SOCKETS" --events "$LONG" --rate "$RATE" \
        --url "http://127.0.0.1:$PROXY_PORT" --data "$FDATA" >"$FDATA/long-$mode-$i.txt"
      c2=$(cpu_seconds "$server")
      sleep 1
      r=$(grep '^RESULT ' "$FDATA/long-$mode-$i.txt" | sed 's/^RESULT //')
      python3 - "$c0" "$c1" "$c2" "$SOCKETS" "$SHORT" "$LONG" "$r" <<'PY' | tee -a "$out"
import json, sys
c0, c1, c2 = map(float, sys.argv[1:4]); n, short, long_ = map(int, sys.argv[4:7]); r = json.loads(sys.argv[7])
marginal = ((c2 - c1) - (c1 - c0)) / ((long_ - short) * n) * 1e6
print("RESULT " + json.dumps({"cpu_us_per_delivery": round(marginal, 3), "cpu_s_long_run": round(c2 - c1, 3),
      "p50_ms": r["p50_ms"], "p99_ms": r["p99_ms"], "deliveries_per_s": r["deliveries_per_s"], "lost": r["lost"]}))
PY
    done
    echo "== fan-out $mode: $SOCKETS sockets, $SHORT then $LONG creations at $RATE/s (server CPU per delivery, marginal)"
    median_of "$out"
    kill "$proxy" "$server" 2>/dev/null || true
    wait "$proxy" "$server" 2>/dev/null || true
    pids=()
  }
  fanout_mode ws
  fanout_mode wss
fi
