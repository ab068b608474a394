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
RUNS="${RUNS:-1}"
BIN="$SCRATCH/release"

# Median (and all values) of RESULT lines' fields: median_of FILE
median_of() {
  python3 - "$1" <<'PY'
import json, statistics, sys
rows = [json.loads(l.split("RESULT ", 1)[1]) for l in open(sys.argv[1]) if l.startswith("RESULT ")]
if not rows: sys.exit("no RESULT lines")
keys = sorted({k for r in rows for k in r})
print(f"runs: {len(rows)}")
for k in keys:
    vals = [r[k] for r in rows if r.get(k) is not None]
    if vals:
        print(f"  {k:22s} median {statistics.median(vals):12.3f}   all: {', '.join(f'{v:.3f}' for v in vals)}")
PY
}
