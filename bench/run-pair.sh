#!/usr/bin/env bash
# bench/run-pair.sh SCENARIO... — two builds of TouchSync in one sitting, on the HTTP scenarios of
# bench/run-http.sh (health, toggle, interaction-state, my-rooms, element-create), paired round by round.
#
# Each round starts each build's server afresh (bench/server.sh: its own `touchsync bench-seed` with
# its own binary, so each runs on the schema its migrations make), pinned to CPU $SERVER_CPU, and
# runs every scenario once (wrk on CPU $LOAD_CPU, $CONNS connections, $DURATION); the order of the
# two alternates between rounds, so a drift of the machine's load does not always hit the same one.
# Prints a markdown table (also $PAIR_DATA/table.md): per scenario and build every round's req/s,
# the median, the server's CPU µs per request, and now ÷ base per round.
#
#   BASE=<scratch dir of the base build>   e.g. ../wt-base/.build-static (built from the older commit)
#   NOW=<scratch dir of the build measured> (default $SCRATCH)
#   BASE_LABEL / NOW_LABEL                 the names in the table (default: the commits, when given)
#   ROUNDS (4)  DURATION (10, seconds)  CONNS (64)
# Example:  BASE=../wt-base/.build-static BASE_LABEL=27feb81 NOW=.build-static bench/run-pair.sh my-rooms interaction-state
source "$(dirname "$0")/lib.sh"
[[ $# -gt 0 ]] || { echo "usage: BASE=<scratch dir> [NOW=<scratch dir>] bench/run-pair.sh SCENARIO..." >&2; exit 2; }
BASE="${BASE:?BASE: the scratch directory of the base build (its release/touchsync)}"
NOW="${NOW:-$SCRATCH}"
BASE_LABEL="${BASE_LABEL:-base}"
NOW_LABEL="${NOW_LABEL:-now $(git rev-parse --short HEAD)}"
ROUNDS="${ROUNDS:-4}"
DURATION="${DURATION:-10}"
[[ "$DURATION" =~ ^[0-9]+$ ]] && DURATION="${DURATION}s"
CONNS="${CONNS:-64}"
P="${PAIR_DATA:-bench/.data-pair}"
for s in "$BASE" "$NOW"; do
  [[ -x "$s/release/touchsync" ]] || { echo "no $s/release/touchsync: build it (swift build -c release --scratch-path $s --product touchsync)" >&2; exit 1; }
done
rm -rf "$P"; mkdir -p "$P/results"
P="$(cd "$P" && pwd)"
export TOUCHSYNC_LIMITS_ENABLED="${LIMITS_ENABLED:-false}"   # one token stands for thousands of writes per second
trap 'BENCH_DATA="$P/server" bench/server.sh stop 2>/dev/null || true' EXIT

# run_build NAME SCRATCH: a fresh seeded server of that build, every scenario once.
run_build() {
  local name=$1 scratch=$2 port scenario
  port=$(free_port)
  BENCH_DATA="$P/server" BENCH_PORT="$port" SCRATCH="$scratch" NO_BUILD=1 bench/server.sh start >/dev/null
  for scenario in "${scenarios[@]}"; do
    measure_http "$P/results" "$name" "$scenario" "$port" "$P/server" "$(cat "$P/server/server.pid")"
  done
  BENCH_DATA="$P/server" bench/server.sh stop
}

scenarios=("$@")
bench_context
echo "base: $BASE_LABEL ($BASE), now: $NOW_LABEL ($NOW); rounds $ROUNDS, $DURATION per run, $CONNS connections; scenarios: ${scenarios[*]}"
for round in $(seq "$ROUNDS"); do
  if (( round % 2 )); then run_build base "$BASE"; run_build now "$NOW"; else run_build now "$NOW"; run_build base "$BASE"; fi
done

python3 - "$P/results" "$BASE_LABEL" "$NOW_LABEL" "${scenarios[@]}" <<'PY' | tee "$P/table.md"
import json, os, statistics, sys
res, base_label, now_label, *scenarios = sys.argv[1:]
def load(name, scenario):
    path = os.path.join(res, f"{name}.{scenario}.out")
    return {r["round"]: r for r in (json.loads(l.split("RESULT ", 1)[1]) for l in open(path) if l.startswith("RESULT "))}
print("| scenario | build | req/s per round | median | server CPU µs/req (median) | p99 ms (median) | errors | now ÷ base per round |")
print("|---|---|---|---|---|---|---|---|")
for sc in scenarios:
    b, n = load("base", sc), load("now", sc)
    for label, rows in ((base_label, b), (now_label, n)):
        rs = [rows[k] for k in sorted(rows)]
        cpu = [r["server_cpu_us_per_req"] for r in rs if "server_cpu_us_per_req" in r]
        ratios = "–" if rows is b else ", ".join(f"{n[k]['rps'] / b[k]['rps']:.2f}" for k in sorted(n) if k in b and b[k]["rps"] > 0)
        rps = ", ".join(f"{r['rps']:,.0f}" for r in rs)
        cpu_median = f"{statistics.median(cpu):.1f}" if cpu else "–"
        print(f"| {sc} | {label} | {rps} | {statistics.median(r['rps'] for r in rs):,.0f} | {cpu_median} "
              f"| {statistics.median(r['p99_ms'] for r in rs):.2f} | {sum(r.get('errors', 0) for r in rs)} | {ratios} |")
PY
