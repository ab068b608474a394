#!/usr/bin/env bash
# bench/toggle-pages.sh — WAL frames (pages written) and fsyncs per durable REST toggle, by B-tree.
#
# A count, not a timing: it is the same on a busy machine as on a quiet one. Seeds a fresh
# database (`touchsync bench-seed`), starts `touchsync serve` with background checkpoints off
# (`database.walAutocheckpointPages` 0, `database.checkpointInterval` 0s: every frame a commit
# appends stays in the WAL to be read back) and `synchronous = FULL`, traces its fsync/fdatasync
# calls (strace -f), then sends $TOGGLES toggles (random user of 1000 × element of 100, as
# bench/profile-toggle.sh) from $CLIENTS curl processes at once (1: serial, one group commit per
# toggle; more: the writer batches what arrives while it commits). Then it kills the server with
# SIGKILL (no checkpoint on close), reads the WAL's frame headers (page number, commit marker)
# and names each page's B-tree from SQLite's `dbstat` table.
#
#   BIN_TOUCHSYNC=path/to/touchsync   default: $SCRATCH/release/touchsync
#   TOGGLES=400 CLIENTS=1             toggles measured, curl processes sending them
#   OUT=bench/.data/pages             where the seed, the WAL and the trace go
#   SEED_SQL='…'                      SQL run on the seeded database before the server starts
# Prints a RESULT line: {"toggles", "clients", "commits", "frames", "frames_per_toggle",
# "wal_syncs_per_toggle", "db_syncs", "by_btree": {name: frames per toggle}}.
source "$(dirname "$0")/lib.sh"
BIN_TOUCHSYNC="${BIN_TOUCHSYNC:-$BIN/touchsync}"
TOGGLES="${TOGGLES:-400}"
CLIENTS="${CLIENTS:-1}"
OUT="${OUT:-$BENCH_DATA/pages}"
PORT="${PAGES_PORT:-3912}"
command -v strace >/dev/null || { echo "$(basename "$0"): strace is not installed" >&2; exit 2; }
rm -rf "$OUT"; mkdir -p "$OUT"
export TOUCHSYNC_DATABASE_SYNCHRONOUS=FULL
export TOUCHSYNC_LIMITS_ENABLED=false
export TOUCHSYNC_DATABASE_WAL_AUTOCHECKPOINT_PAGES=0
export TOUCHSYNC_DATABASE_CHECKPOINT_INTERVAL=0s
"$BIN_TOUCHSYNC" bench-seed --database "$OUT/bench.sqlite" --out "$OUT" --log-level warning 2>"$OUT/seed.log"
# A what-if on the seeded schema before the server starts (e.g. SEED_SQL='DROP INDEX reactions_by_user'):
# what a schema change would save, measured before writing its migration.
if [[ -n "${SEED_SQL:-}" ]]; then
  python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.close()' "$OUT/bench.sqlite" "$SEED_SQL"
fi
"$BIN_TOUCHSYNC" serve --port "$PORT" --database "$OUT/bench.sqlite" --log-level warning >"$OUT/server.log" 2>&1 &
spid=$!
trap 'kill -KILL $spid 2>/dev/null || true' EXIT
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break; sleep 0.1; done
toggle_curl_configs "$OUT" "$TOGGLES" "$PORT" "$CLIENTS"
# Warm-up (first statements, first pages of each table in the WAL), not counted.
for i in 1 2 3 4 5 6 7 8; do
  curl -s -X POST -o /dev/null -H "Authorization: Bearer $(sed -n "${i}p" "$OUT/tokens.txt")" \
    "http://127.0.0.1:$PORT/api/rooms/$(head -1 "$OUT/toggle-room.txt")/elements/$(sed -n "${i}p" "$OUT/toggle-elements.txt")/reactions/toggle"
done
wal="$OUT/bench.sqlite-wal"
wal0=$(stat -c %s "$wal")
strace -f -p "$spid" -y -e trace=fsync,fdatasync -o "$OUT/strace.txt" 2>/dev/null &
tpid=$!
sleep 1   # strace attaches to every thread of the server before the first toggle
send_curl_configs "$OUT" "$CLIENTS"
kill -INT "$tpid"; wait "$tpid" 2>/dev/null || true
kill -KILL "$spid"; wait "$spid" 2>/dev/null || true
trap - EXIT
ok=$(cat "$OUT"/codes.*.txt | grep -c '^200$' || true)
python3 - "$OUT" "$TOGGLES" "$CLIENTS" "$ok" "$wal0" <<'PY'
import collections, json, re, shutil, sqlite3, struct, sys
out, n, clients, ok, wal0 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
wal = open(f"{out}/bench.sqlite-wal", "rb").read()
page_size = struct.unpack(">I", wal[8:12])[0]
salt = wal[16:24]
frame = 24 + page_size
first = (wal0 - 32) // frame          # frames before the measured toggles
pages, commits, i = [], 0, first
while 32 + (i + 1) * frame <= len(wal):
    h = wal[32 + i * frame: 32 + i * frame + 24]
    if h[8:16] != salt: break
    pgno, size_after = struct.unpack(">II", h[:8])
    pages.append(pgno)
    if size_after: commits += 1
    i += 1
# Name each page by its B-tree (the database as the WAL leaves it: a copy, so the WAL stays).
shutil.copy(f"{out}/bench.sqlite", f"{out}/copy.sqlite"); shutil.copy(f"{out}/bench.sqlite-wal", f"{out}/copy.sqlite-wal")
c = sqlite3.connect(f"{out}/copy.sqlite")
owner = dict(c.execute("SELECT pageno, name FROM dbstat"))
by = collections.Counter(owner.get(p, "other (freelist, pointer map, page 1)" if p != 1 else "page 1 (header)") for p in pages)
syncs = collections.Counter()
for line in open(f"{out}/strace.txt"):
    m = re.search(r"(fsync|fdatasync)\(\d+<([^>]*)>", line)
    if m: syncs["wal" if m.group(2).endswith("-wal") else "db" if m.group(2).endswith(".sqlite") else m.group(2)] += 1
print("RESULT " + json.dumps({"toggles": n, "ok": ok, "clients": clients, "commits": commits, "frames": len(pages),
    "frames_per_toggle": round(len(pages) / n, 2), "frames_per_commit": round(len(pages) / max(commits, 1), 2),
    "wal_syncs_per_toggle": round(syncs["wal"] / n, 3), "other_syncs": {k: v for k, v in syncs.items() if k != "wal"},
    "by_btree": {k: round(v / n, 2) for k, v in by.most_common()}}))
PY
