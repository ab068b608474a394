#!/usr/bin/env bash
# bench/peers/nginx-health.sh start|stop PORT DIR — Debian's nginx answering GET /health, the
# reference peer of bench/run-compare.sh (bench/README.md, "Peers").
#   start: writes DIR/nginx.conf (one worker; /health answers a fixed JSON body with the fields and
#          about the size of TouchSync's own, so the comparison is HTTP work alone; access_log off;
#          keep-alive as TouchSync holds it: 60 s idle, no cap on requests per connection) and runs
#          nginx from it in the foreground of a background job. Everything nginx writes (pid, error
#          log, temp directories) stays in DIR: no root, nothing in /var. The worker's pid, the process
#          that does the work, goes to DIR/worker.pid (for the CPU time per request); the master's to
#          DIR/nginx.pid.
#   stop:  stops the nginx started from DIR.
set -euo pipefail
cmd=${1:?usage: nginx-health.sh start|stop PORT DIR}
port=${2:?usage: nginx-health.sh start|stop PORT DIR}
dir=${3:?usage: nginx-health.sh start|stop PORT DIR}
NGINX="${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}"
# The body: status, version, uptimeSeconds and database, as TouchSync's /health (OperationsRoutes.swift).
HEALTH_BODY="${HEALTH_BODY:-{\"status\":\"ok\",\"version\":\"0.1.0\",\"uptimeSeconds\":0,\"database\":\"ok\"\}}"

stop() {
  [[ -f "$dir/nginx.pid" ]] || return 0
  local pid; pid=$(cat "$dir/nginx.pid")
  kill -QUIT "$pid" 2>/dev/null || true   # graceful: the worker finishes and exits
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -TERM "$pid" 2>/dev/null || true
  rm -f "$dir/nginx.pid" "$dir/worker.pid"
}

case "$cmd" in
  stop) stop; exit 0 ;;
  start) ;;
  *) echo "usage: nginx-health.sh start|stop PORT DIR" >&2; exit 2 ;;
esac
[[ -x "$NGINX" ]] || { echo "nginx is not installed (apt-get install -y nginx)" >&2; exit 1; }
stop
mkdir -p "$dir/tmp"
dir=$(cd "$dir" && pwd)
cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    keepalive_timeout 60s;
    keepalive_requests 1000000000;
    server_tokens off;
    server {
        listen 127.0.0.1:$port;
        location = /health {
            default_type application/json;
            return 200 '$HEALTH_BODY';
        }
    }
}
CONF
"$NGINX" -t -q -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf"
# `daemon off`: the master is this job's child, so the caller's taskset pins master and worker.
"$NGINX" -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" -g "daemon off;" >"$dir/stdout.log" 2>&1 &
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$port/health" >/dev/null || { echo "nginx did not start; see $dir/error.log" >&2; exit 1; }
pgrep -P "$(cat "$dir/nginx.pid")" | head -1 >"$dir/worker.pid"
echo "nginx master $(cat "$dir/nginx.pid"), worker $(cat "$dir/worker.pid") on http://127.0.0.1:$port"
