#!/usr/bin/env bash
# bench/run-storage-growth.sh [after|before]   — the database's size over a long toggle run
# (notification pruning, WAL bound). Starts a fresh seeded server (bench/server.sh), then runs ROUNDS rounds of the
# toggle scenario (wrk, DURATION each, pinned like bench/run-http.sh) and after each round prints a
# RESULT line with the toggles so far, the database and WAL file sizes and the rows of notifications,
# room_notifications and reactions (the live hearts: at most users × elements, about half of them set).
#   after  (default): pruning and WAL checkpoints on, as configured by the variables below.
#   before: notifications.pruneInterval=0s and database.checkpointInterval=0s — nothing is pruned
#           and no TRUNCATE checkpoint runs: the behaviour before the pruning work.
# Variables: ROUNDS (12), DURATION (10s), PRUNE_INTERVAL (5s), CHECKPOINT_INTERVAL (5s),
# MAX_PER_USER (1000), RETENTION (30d), plus those of bench/lib.sh (NO_BUILD=1 skips the build).
source "$(dirname "$0")/lib.sh"
mode="${1:-after}"
case "$mode" in
  after)
    export TOUCHSYNC_NOTIFICATIONS_PRUNE_INTERVAL="${PRUNE_INTERVAL:-5s}"
    export TOUCHSYNC_DATABASE_CHECKPOINT_INTERVAL="${CHECKPOINT_INTERVAL:-5s}"
    export TOUCHSYNC_NOTIFICATIONS_MAX_PER_USER="${MAX_PER_USER:-1000}"
    export TOUCHSYNC_NOTIFICATIONS_RETENTION="${RETENTION:-30d}" ;;
  before)
    export TOUCHSYNC_NOTIFICATIONS_PRUNE_INTERVAL=0s
    export TOUCHSYNC_DATABASE_CHECKPOINT_INTERVAL=0s ;;
  *) echo "usage: bench/run-storage-growth.sh [after|before]" >&2; exit 2 ;;
esac
bench/server.sh start
trap 'bench/server.sh stop' EXIT
db="$BENCH_DATA/bench.sqlite"
out="$BENCH_DATA/storage-growth-$mode.out"
: >"$out"
size() { stat -c %s "$1" 2>/dev/null || echo 0; }
rows() { sqlite3 -readonly "file:$db?mode=ro" "SELECT (SELECT COUNT(*) FROM notifications) || ' ' || (SELECT COUNT(*) FROM room_notifications) || ' ' || (SELECT COUNT(*) FROM reactions)" 2>/dev/null || echo "? ? ?"; }
report() {  # round toggles
  read -r personal room reactions <<<"$(rows)"
  local line
  line=$(printf 'RESULT {"mode": "%s", "round": %d, "toggles": %d, "db_bytes": %d, "wal_bytes": %d, "notifications": "%s", "room_notifications": "%s", "reactions": "%s"}' \
    "$mode" "$1" "$2" "$(size "$db")" "$(size "$db-wal")" "$personal" "$room" "$reactions")
  echo "$line" | tee -a "$out"
}
total=0
report 0 0
for round in $(seq "${ROUNDS:-12}"); do
  n=$(taskset -c "$LOAD_CPU" wrk -t2 -c64 -d"${DURATION:-10s}" -s bench/wrk/toggle.lua "$URL" \
        | sed -n 's/^RESULT //p' | python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); print(r["requests"] - r["non2xx"])')
  total=$((total + n))
  # The pruner and the checkpoint run on their timer: give them one interval after the load.
  sleep "${SETTLE_SECONDS:-6}"
  report "$round" "$total"
done
echo "== $mode: $(tail -1 "$out")"
