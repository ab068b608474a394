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
RUNS="${RUNS:-5}"                           # issue 14 item 6: 5 runs, median and spread
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
