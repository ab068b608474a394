# Shared settings of the bench/*.sh scripts (sourced, not run).
set -euo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
cd "$ROOT"
export BENCH_DATA="${BENCH_DATA:-bench/.data}"
BENCH_PORT="${BENCH_PORT:-3900}"
URL="${URL:-http://127.0.0.1:$BENCH_PORT}"
SCRATCH="${SCRATCH:-.build-bench}"          # release build directory (swift build --scratch-path)
SERVER_CPU="${SERVER_CPU:-0}"               # the server is pinned here ...
LOAD_CPU="${LOAD_CPU:-1}"                   # ... and every load generator here
RUNS="${RUNS:-5}"                           # 5 runs, median and spread
BIN="$SCRATCH/release"

# What a result was measured on: date, commit (and whether Sources had uncommitted changes), machine.
bench_context() {
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift 2>/dev/null || echo ' (+ uncommitted changes)')"
  echo "machine: $(nproc) CPUs, $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p'), kernel $(uname -r); server CPU $SERVER_CPU, load CPU $LOAD_CPU"
}

# A filter for a scenario's output: every `RESULT {json}` line gets the load average at the
# moment the run ended ("load1", "load5", "load15" from /proc/loadavg), so each run carries the
# load it was measured under. Other lines pass unchanged.
with_load() {
  local line l1 l5 l15 _
  while IFS= read -r line; do
    if [[ "$line" == "RESULT {"*"}" ]]; then
      read -r l1 l5 l15 _ </proc/loadavg
      line="${line%\}}, \"load1\": $l1, \"load5\": $l5, \"load15\": $l15}"
    fi
    printf '%s\n' "$line"
  done
}

# Median, spread (min–max) and all values of the RESULT lines' fields: median_of FILE [LABEL].
# Also appends one `SUMMARY {json}` line (label, date, commit, machine, runs, and per field
# median/min/max) to $BENCH_DATA/summary.jsonl, the record the RESULTS.md rows are copied from.
median_of() {
  BENCH_COMMIT="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift 2>/dev/null || echo '+dirty')" \
  BENCH_MACHINE="$(nproc) CPUs, $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p'), kernel $(uname -r)" \
  python3 - "$1" "${2:-$(basename "$1" .out)}" "$BENCH_DATA/summary.jsonl" <<'PY'
import datetime, json, os, statistics, sys
rows = [json.loads(l.split("RESULT ", 1)[1]) for l in open(sys.argv[1]) if l.startswith("RESULT ")]
if not rows: sys.exit("no RESULT lines")
keys = sorted({k for r in rows for k in r})
date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
print(f"runs: {len(rows)}   date: {date}   commit: {os.environ['BENCH_COMMIT']}   machine: {os.environ['BENCH_MACHINE']}")
summary = {"label": sys.argv[2], "date": date, "commit": os.environ["BENCH_COMMIT"], "machine": os.environ["BENCH_MACHINE"], "runs": len(rows)}
for k in keys:
    vals = [r[k] for r in rows if isinstance(r.get(k), (int, float))]
    if vals:
        med = statistics.median(vals)
        print(f"  {k:22s} median {med:12.3f}   spread {min(vals):.3f}–{max(vals):.3f}   all: {', '.join(f'{v:.3f}' for v in vals)}")
        summary[k] = {"median": med, "min": min(vals), "max": max(vals)}
with open(sys.argv[3], "a") as f:
    f.write("SUMMARY " + json.dumps(summary) + "\n")
PY
}

# The server under valgrind's callgrind, for bench/profile-toggle.sh and bench/profile-reads.sh
# (instructions per request, every thread counted; counting starts OFF).
# callgrind_serve BIN OUT PORT: seeds a fresh database in OUT (`touchsync bench-seed`), starts a
# debug-stripped copy of BIN serving it on PORT under callgrind and waits for /health. Sets `vpid`
# and `cg` (the callgrind output prefix). valgrind 3.19 (Debian 12) cannot read the DWARF 5 the
# Swift toolchain emits, so the copy keeps its symbol table only (functions keep their names).
callgrind_serve() {
  local bin=$1 out=$2 port=$3
  command -v valgrind >/dev/null || { echo "$(basename "$0"): valgrind is not installed" >&2; exit 2; }
  rm -rf "$out"; mkdir -p "$out"
  export TOUCHSYNC_DATABASE_SYNCHRONOUS="${SYNC:-FULL}"
  export TOUCHSYNC_LIMITS_ENABLED="${LIMITS_ENABLED:-false}"  # single users at thousands of writes/s
  "$bin" bench-seed --database "$out/bench.sqlite" --out "$out" --log-level warning 2>"$out/seed.log"
  cg="$out/callgrind.out"
  objcopy --strip-debug "$bin" "$out/touchsync"
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$cg" \
    "$out/touchsync" serve --port "$port" --database "$out/bench.sqlite" --log-level warning >"$out/server.log" 2>&1 &
  vpid=$!
  trap 'kill -TERM $vpid 2>/dev/null || true' EXIT
  for _ in $(seq 600); do curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.2; done
  curl -sf "http://127.0.0.1:$port/health" >/dev/null || { echo "server did not start under valgrind; see $out/server.log" >&2; exit 1; }
}

# callgrind_finish OUT: stops counting, dumps, stops the server of `callgrind_serve`; sets
# `cg_total` (instructions summed over every thread's file) and writes the top functions
# (callgrind_annotate, inclusive) to OUT/annotate.txt.
callgrind_finish() {
  local out=$1 files f n
  callgrind_control -i off "$vpid" >/dev/null
  callgrind_control -d "$vpid" >/dev/null
  kill -TERM "$vpid"; wait "$vpid" 2>/dev/null || true
  trap - EXIT
  files=$(ls "$cg"* 2>/dev/null)
  cg_total=0
  for f in $files; do
    n=$(grep -m1 '^totals:' "$f" | awk '{print $2}')
    cg_total=$((cg_total + ${n:-0}))
  done
  # One file per call: callgrind_annotate reads a second file name as a source file to annotate.
  : >"$out/annotate.txt"
  for f in $files; do
    if grep -q '^totals: [1-9]' "$f"; then callgrind_annotate --inclusive=yes "$f" 2>/dev/null | head -80 >>"$out/annotate.txt" || true; fi
  done
}

# callgrind_requests OUT SCENARIO REQUESTS WARMUP, after `callgrind_serve` and with OUT/curl.cfg
# written (curl requests separated by `next`): sends the first WARMUP requests uncounted, counts
# all of them on one keep-alive connection, finishes (`callgrind_finish`) and prints the RESULT
# line {"scenario", "requests", "ok" (200s), "instructions", "instructions_per_request"}.
callgrind_requests() {
  local out=$1 scenario=$2 requests=$3 warmup=$4 ok
  head -n "$(grep -n '^next$' "$out/curl.cfg" | sed -n "${warmup}p" | cut -d: -f1)" "$out/curl.cfg" | sed '$d' >"$out/warm.cfg"
  curl -s -K "$out/warm.cfg" >/dev/null
  callgrind_control -i on "$vpid" >/dev/null
  curl -s -K "$out/curl.cfg" >"$out/codes.txt"
  ok=$(grep -c '^200$' "$out/codes.txt" || true)
  callgrind_finish "$out"
  python3 - "$scenario" "$requests" "$ok" "$cg_total" <<'PY'
import json, sys
s, n, ok, total = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
print("RESULT " + json.dumps({"scenario": s, "requests": n, "ok": ok, "instructions": total,
                              "instructions_per_request": round(total / max(n, 1))}))
PY
}

# toggle_curl_configs OUT TOGGLES PORT CLIENTS: the toggle scenario (random user of 1000 × element
# of 100, from the id files `touchsync bench-seed` wrote into OUT; random seed 14) as TOGGLES curl
# requests to 127.0.0.1:PORT, dealt round-robin into CLIENTS config files OUT/curl.K.cfg: the same
# toggles whatever CLIENTS is. For bench/profile-toggle.sh and bench/toggle-pages.sh.
toggle_curl_configs() {
  python3 - "$@" <<'PY'
import os, random, sys
out, n, port, clients = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
tokens = open(f"{out}/tokens.txt").read().split()
tokens = tokens[:int(os.environ.get("CALLERS") or len(tokens))]
elements = open(f"{out}/toggle-elements.txt").read().split()
room = open(f"{out}/toggle-room.txt").read().split()[0]
random.seed(14)
files = [open(f"{out}/curl.{k}.cfg", "w") for k in range(clients)]
for i in range(n):
    f = files[i % clients]
    if f.tell(): print("next", file=f)
    print('request = "POST"', file=f)
    print(f'header = "Authorization: Bearer {random.choice(tokens)}"', file=f)
    print('output = "/dev/null"', file=f)
    print('write-out = "%{http_code}\\n"', file=f)
    print(f'url = "http://127.0.0.1:{port}/api/rooms/{room}/elements/{random.choice(elements)}/reactions/toggle"', file=f)
PY
}

# send_curl_configs OUT CLIENTS: one curl process per config file of `toggle_curl_configs`, all at
# once (each one keep-alive connection); each writes its status codes to OUT/codes.K.txt.
send_curl_configs() {
  local out=$1 clients=$2 k senders=()
  for k in $(seq 0 $((clients - 1))); do curl -s -K "$out/curl.$k.cfg" >"$out/codes.$k.txt" & senders+=($!); done
  wait "${senders[@]}"
}

# A free TCP port on 127.0.0.1 (bound and released; the server binds it next).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# measure_http OUT NAME SCENARIO PORT DATA PID: one bench/run-http.sh run ($DURATION, $CONNS
# connections) against the server on PORT (process PID, its seed's ids in DATA); its RESULT line,
# with "round": $round, appended to OUT/NAME.SCENARIO.out and printed; the run's whole output in
# OUT/NAME.SCENARIO.round$round.log. Stops the script when wrk fails or gives no RESULT line.
measure_http() {
  local out=$1 name=$2 scenario=$3 port=$4 data=$5 pid=$6 log="$1/$2.$3.round$round.log"
  BENCH_DATA="$data" URL="http://127.0.0.1:$port" SERVER_PID="$pid" RUNS=1 DURATION="$DURATION" CONNECTIONS="$CONNS" \
    bench/run-http.sh "$scenario" >"$log" 2>&1 || { echo "run failed: $name $scenario (see $log)" >&2; exit 1; }
  grep -q '^RESULT ' "$log" || { echo "no RESULT line from wrk: $name $scenario (see $log)" >&2; exit 1; }
  grep -m1 '^RESULT ' "$log" | sed "s/^RESULT {/RESULT {\"round\": $round, /" \
    | tee -a "$out/$name.$scenario.out" | sed "s/^/round $round $name $scenario: /"
}
