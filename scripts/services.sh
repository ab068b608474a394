#!/usr/bin/env bash
# Throw-away PostgreSQL and Redis servers for the test suite, on free loopback ports in a
# temporary directory, removed afterwards.
#
#   scripts/services.sh start DIR   starts what is installed; writes DIR/env (shell `export` lines):
#                                     TOUCHSYNC_TEST_POSTGRES_URL  postgres://touchsync@127.0.0.1:PORT/touchsync
#                                     TOUCHSYNC_TEST_REDIS_URL     redis://127.0.0.1:PORT
#                                     TOUCHSYNC_TEST_SERVICES_SKIPPED  why a service is missing (visible skips)
#   scripts/services.sh stop DIR    stops both and deletes DIR
#
# PostgreSQL refuses to run as root: as root the cluster belongs to the `postgres` user (created by
# Debian's postgresql package) and runs through `runuser`. Authentication is `trust` on 127.0.0.1
# only; the superuser `touchsync` may create a database per test.
set -euo pipefail
cmd=${1:?usage: services.sh start|stop DIR}
dir=${2:?usage: services.sh start|stop DIR}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

pg_bin() {
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && { echo "$d"; return; }; done
  command -v initdb >/dev/null 2>&1 && dirname "$(command -v initdb)"
}

as_pg() { if [ "$(id -u)" = "0" ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

case "$cmd" in
start)
  mkdir -p "$dir"
  : > "$dir/env"
  skipped=""
  bin=$(pg_bin || true)
  if [ -n "$bin" ] && { [ "$(id -u)" != "0" ] || id postgres >/dev/null 2>&1; }; then
    port=$(free_port)
    mkdir -p "$dir/pg"
    [ "$(id -u)" = "0" ] && chown postgres "$dir/pg" && chmod 755 "$dir"
    as_pg "$bin/initdb" -D "$dir/pg/data" -U touchsync --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/pg/initdb.log" 2>&1 \
      || as_pg "$bin/initdb" -D "$dir/pg/data" -U touchsync --auth=trust -E UTF8 --locale=C >"$dir/pg/initdb.log" 2>&1
    # TOUCHSYNC_TEST_PG_FSYNC=off (scripts/test sets it) skips PostgreSQL's fsync calls. Every
    # write still reaches the operating system before its commit returns, so a killed server or
    # client loses nothing the tests can see; only a machine crash could, which no test stages. It
    # makes CREATE/DROP DATABASE (one per live server) about a second cheaper each. The default
    # stays on for the benchmarks (bench/run-compare.sh, bench/run-cluster.sh), which measure it.
    fsync="${TOUCHSYNC_TEST_PG_FSYNC:-on}"
    case "$fsync" in on|off) ;; *) echo "services.sh: TOUCHSYNC_TEST_PG_FSYNC must be on or off, not '$fsync'" >&2; exit 2;; esac
    as_pg "$bin/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/server.log" -w -t 60 \
      -o "-p $port -k $dir/pg -c listen_addresses=127.0.0.1 -c max_connections=300 -c shared_buffers=64MB -c fsync=$fsync" start >/dev/null
    as_pg "$bin/psql" -h 127.0.0.1 -p "$port" -U touchsync -d postgres -qc "CREATE DATABASE touchsync" >/dev/null
    echo "export TOUCHSYNC_TEST_POSTGRES_URL=postgres://touchsync@127.0.0.1:$port/touchsync" >> "$dir/env"
    echo "$bin" > "$dir/pg/bin"
    echo "services: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (fsync $fsync)"
  else
    skipped="${skipped}PostgreSQL is not installed (apt-get install -y postgresql libpq-dev); "
  fi
  if command -v redis-server >/dev/null 2>&1; then
    port=$(free_port)
    mkdir -p "$dir/redis"
    redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir/redis" \
      --daemonize yes --pidfile "$dir/redis/redis.pid" --logfile "$dir/redis/redis.log"
    for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    echo "export TOUCHSYNC_TEST_REDIS_URL=redis://127.0.0.1:$port" >> "$dir/env"
    echo "services: Redis $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/') on 127.0.0.1:$port"
  else
    skipped="${skipped}Redis is not installed (apt-get install -y redis-server); "
  fi
  [ -n "$skipped" ] && echo "export TOUCHSYNC_TEST_SERVICES_SKIPPED='${skipped}'" >> "$dir/env"
  true
  ;;
stop)
  [ -d "$dir" ] || exit 0
  if [ -f "$dir/pg/bin" ]; then as_pg "$(cat "$dir/pg/bin")/pg_ctl" -D "$dir/pg/data" -m immediate -w stop >/dev/null 2>&1 || true; fi
  if [ -f "$dir/redis/redis.pid" ]; then kill "$(cat "$dir/redis/redis.pid")" 2>/dev/null || true; fi
  rm -rf "$dir"
  ;;
*) echo "usage: services.sh start|stop DIR" >&2; exit 2 ;;
esac
