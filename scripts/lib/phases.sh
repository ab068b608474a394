# The phase runner of scripts/test, sourced (bash 3.2 and later: macOS's /bin/bash has no
# associative arrays, so none are used).
#
# A phase is one command whose output is kept in $TS_LOG_DIR/<name>.log. Every phase runs, whatever
# the earlier ones did: a failing browser test must not hide that the PostgreSQL rerun was never
# reached. Each phase ends with one line, `<name>: PASSED (…)`, `<name>: FAILED (…)` or
# `<name>: SKIPPED: <reason>`, and `ts_summary` ends the run with one line summing the tests every
# phase reported: `N passed, N failed` (and `, N skipped`), exiting 1 when anything failed.
#
# The counts come from each tool's own summary, by the phase's kind:
#   xctest    the last "Executed N tests, with S tests skipped and F failures" (the outermost suite)
#   pytest    pytest's final "… passed, … failed, … skipped, … error in …s" line
#   autobahn  conformance/autobahn/run.sh's "cases: N" and one "  FAIL <case>" line per failed case
#   fuzz      fuzz/run.sh's "fuzz-<target>: OK" / "fuzz-<target>: CRASH" lines; exit 77: skipped
#   single    one test: exit 0 passed, 77 skipped (the last line of output says why), else failed
#   setup     no tests (a build, a virtualenv): counts one failure only when it fails
# A phase that exits non-zero without a failed test in its summary (a crash, a build error) counts
# one failure, so a broken phase can never pass as "0 failed". A skipped phase counts one skipped.
#
# Each line ends with the phase's wall-clock duration and the CPU time its processes used,
# `[1m05s, cpu 1m52s]`, and ts_summary prints the whole run's, `total time: 12m34s`, just before the
# total line (which stays the last line: CI reads it). A background phase's duration runs from its
# start to its own end, not to when the runner collected it. The CPU time is bash's `times` for the
# phase's subshell: user + system time of every process the phase waited for (a server a test
# started and reaped counts; one left running past the phase would not). On two cores a run is
# bound by the sum of these, so they say where a minute can be saved.
#
# ts_phase_start / ts_phase_finish run a phase in the background beside the ones that follow (its
# output goes only to its log until it is finished, so two phases' output never interleave): for
# phases that share nothing (no port, file, database or fixed-name resource) with those they overlap.
#
# ts_wait_phase NAME, inside a background phase's command, waits until the background phase NAME
# (started before it) has ended, so one phase can use what another wrote while both stay apart from
# the foreground ones; it returns 1 at once when NAME was not started in this run.
#
# TOUCHSYNC_TEST_PHASES=name,name… runs only those phases; the others say they were skipped and why.

TS_START=$(date +%s)
TS_PASSED=0
TS_FAILED=0
TS_SKIPPED=0
TS_CPU=0
TS_RESULTS=()
TS_LOG_DIR="${TS_LOG_DIR:-.build/phases}"

# Whether TOUCHSYNC_TEST_PHASES (when set) names the phase.
ts_wanted() {
  [ -z "${TOUCHSYNC_TEST_PHASES:-}" ] && return 0
  case ",${TOUCHSYNC_TEST_PHASES}," in *",$1,"*) return 0 ;; esac
  return 1
}

# 75 -> "1m15s", 9 -> "9s".
ts_duration() {
  if [ "$1" -ge 60 ]; then printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); else printf '%ds' "$1"; fi
}

ts_record() {  # name result passed failed skipped [seconds [cpu seconds]]
  TS_PASSED=$((TS_PASSED + $3))
  TS_FAILED=$((TS_FAILED + $4))
  TS_SKIPPED=$((TS_SKIPPED + $5))
  local line="$1: $2  [$(ts_duration "${6:-0}")${7:+, cpu $(ts_duration "$7")}]"
  [ -n "${7:-}" ] && TS_CPU=$((TS_CPU + $7))
  TS_RESULTS+=("$line")
  echo "$line"
}

# ts_skip NAME REASON: a phase that does not run here, and why.
ts_skip() {
  ts_record "$1" "SKIPPED: $2" 0 0 1
}

# ts_timed CPUFILE COMMAND ARGS…: runs the command, then writes the whole seconds of CPU it and
# its waited-for descendants used (bash's `times`: the shell's own line, then its children's) to
# CPUFILE; returns the command's status.
ts_timed() {
  local cpu_file="$1" rc
  shift
  ("$@")  # a subshell, as before: the command may exit or cd
  rc=$?
  # `times` itself, not in a pipe or $(…): a forked copy of the shell would have no children.
  times > "$cpu_file.times"
  awk '{ for (i = 1; i <= NF; i++) { split($i, t, "m"); n += t[1] * 60 + t[2] } }
       END { printf "%d\n", n + 0.5 }' "$cpu_file.times" > "$cpu_file"
  rm -f "$cpu_file.times"
  return $rc
}

# The whole seconds in FILE (written by ts_timed), or nothing.
ts_cpu_of() {
  [ -s "$1" ] && cat "$1"
}

# "passed failed skipped" from a phase's log.
ts_count_xctest() {
  local line total skipped failures
  line=$(grep -E "Executed [0-9]+ tests?, with" "$1" | tail -1)
  [ -n "$line" ] || { echo "0 0 0"; return; }
  total=$(echo "$line" | sed -E 's/.*Executed ([0-9]+) tests?.*/\1/')
  skipped=$(echo "$line" | grep -oE "[0-9]+ tests? skipped" | grep -oE "^[0-9]+")
  failures=$(echo "$line" | grep -oE "[0-9]+ failures?" | head -1 | grep -oE "^[0-9]+")
  skipped=${skipped:-0}; failures=${failures:-0}
  echo "$((total - skipped - failures)) $failures $skipped"
}

ts_count_pytest() {
  local line p f s e
  line=$(grep -E "[0-9]+ (passed|failed|skipped|errors?|deselected)|no tests ran" "$1" | grep -E " in [0-9.]+s" | tail -1)
  p=$(echo "$line" | grep -oE "[0-9]+ (passed|xpassed)" | awk '{n += $1} END {print n + 0}')
  f=$(echo "$line" | grep -oE "[0-9]+ (failed|errors?)" | awk '{n += $1} END {print n + 0}')
  s=$(echo "$line" | grep -oE "[0-9]+ (skipped|xfailed)" | awk '{n += $1} END {print n + 0}')
  echo "$p $f $s"
}

ts_count_autobahn() {
  local cases fails
  cases=$(grep -E "^cases: [0-9]+" "$1" | tail -1 | grep -oE "[0-9]+")
  fails=$(grep -cE "^  FAIL " "$1")
  cases=${cases:-0}
  echo "$((cases - fails)) $fails 0"
}

ts_count_fuzz() {
  echo "$(grep -cE "^fuzz-[A-Za-z0-9_-]+: OK" "$1") $(grep -cE "^fuzz-[A-Za-z0-9_-]+: CRASH|^FAIL: " "$1") 0"
}

ts_count_single() {
  case "$2" in 0) echo "1 0 0" ;; 77) echo "0 0 1" ;; *) echo "0 1 0" ;; esac
}

ts_count_setup() {
  echo "0 0 0"
}

# What the display shows of a phase's output while it runs (everything, except XCTest's two lines
# per test: their errors, failures and suite totals, as the full log is on disk).
ts_display() {
  if [ "$1" = "xctest" ]; then
    grep -E "error:|: error|failed \(|Executed [0-9]+ test" | tail -60
  else
    cat
  fi
}

# ts_phase KIND NAME COMMAND ARGS…: runs one phase (see above) and records its line.
ts_phase() {
  local kind="$1" name="$2"
  shift 2
  if ! ts_wanted "$name"; then
    ts_skip "$name" "not in TOUCHSYNC_TEST_PHASES"
    return 0
  fi
  mkdir -p "$TS_LOG_DIR"
  local log="$TS_LOG_DIR/$name.log" started rc errexit=0
  echo "== $name"
  started=$(date +%s)
  case $- in *e*) errexit=1 ;; esac
  # errexit off for the command (a failing phase is a result, not the end of the run); the pipe's
  # first status is the command's. The command runs in a subshell: it may exit or cd.
  set +e
  rm -f "$log.cpu"
  (ts_timed "$log.cpu" "$@") 2>&1 | tee "$log" | ts_display "$kind"
  rc=${PIPESTATUS[0]}
  [ "$errexit" -eq 1 ] && set -e
  ts_result "$kind" "$name" "$rc" $(($(date +%s) - started)) "$(ts_cpu_of "$log.cpu")"
  rm -f "$log.cpu"
}

# ts_phase_start KIND NAME COMMAND ARGS…: starts the phase in the background, its output to its log
# only; ts_phase_finish NAME waits for it, then shows its output and records its line.
TS_BACKGROUND=()
ts_phase_start() {
  local kind="$1" name="$2"
  shift 2
  ts_wanted "$name" || return 0
  mkdir -p "$TS_LOG_DIR"
  local log="$TS_LOG_DIR/$name.log"
  rm -f "$log.rc" "$log.done" "$log.cpu" "$log.ended"
  echo "== $name (started in the background; its output follows when it ends)"
  date +%s > "$log.started"
  # $log.done (kept until the phase starts again) is what ts_wait_phase waits for.
  (set +e; (ts_timed "$log.cpu" "$@") > "$log" 2>&1; echo $? > "$log.rc"; date +%s > "$log.ended"; : > "$log.done") &
  TS_BACKGROUND+=("$kind $name $!")
}

# ts_phase_started NAME: whether the background phase NAME was started in this run.
ts_phase_started() {
  local entry
  for entry in ${TS_BACKGROUND[@]+"${TS_BACKGROUND[@]}"}; do
    case "$entry" in *" $1 "*) return 0 ;; esac
  done
  return 1
}

ts_wait_phase() {
  ts_phase_started "$1" || return 1
  # A sibling background job cannot be `wait`ed for; its end is a file (polled: bash 3.2, no flock on macOS).
  while [ ! -e "$TS_LOG_DIR/$1.log.done" ]; do sleep 1; done
}

ts_phase_finish() {
  local name="$1" entry kind pid
  if ! ts_wanted "$name"; then
    ts_skip "$name" "not in TOUCHSYNC_TEST_PHASES"
    return 0
  fi
  for entry in ${TS_BACKGROUND[@]+"${TS_BACKGROUND[@]}"}; do
    case "$entry" in *" $name "*) kind=${entry%% *}; pid=${entry##* } ;; esac
  done
  [ -n "${pid:-}" ] || { ts_record "$name" "FAILED (never started)" 0 1 0; return 0; }
  wait "$pid" 2>/dev/null
  local log="$TS_LOG_DIR/$name.log" rc started ended
  rc=$(cat "$log.rc" 2>/dev/null || echo 1)
  started=$(cat "$log.started")
  ended=$(cat "$log.ended" 2>/dev/null || date +%s)
  echo "== $name (ran in the background)"
  ts_display "$kind" < "$log"
  ts_result "$kind" "$name" "$rc" $((ended - started)) "$(ts_cpu_of "$log.cpu")"
  rm -f "$log.rc" "$log.started" "$log.ended" "$log.cpu"
}

# ts_result KIND NAME EXIT SECONDS [CPU]: the phase's counts from its log, and its line.
ts_result() {
  local kind="$1" name="$2" rc="$3" secs="$4" cpu="${5:-}" log="$TS_LOG_DIR/$2.log"
  local counts p f s
  counts=$("ts_count_$kind" "$log" "$rc")
  p=${counts%% *}; counts=${counts#* }; f=${counts%% *}; s=${counts#* }
  if [ "$rc" -eq 77 ] && { [ "$kind" = "single" ] || [ "$kind" = "fuzz" ]; }; then
    local why
    why=$(grep -v '^[[:space:]]*$' "$log" | tail -1)
    ts_record "$name" "SKIPPED: ${why:-exit 77}" 0 0 1 "$secs" "$cpu"
    return 0
  fi
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  local detail="$p passed, $f failed"
  [ "$s" -gt 0 ] && detail="$detail, $s skipped"
  if [ "$rc" -eq 0 ] && [ "$kind" = "setup" ]; then
    ts_record "$name" "PASSED" 0 0 0 "$secs" "$cpu"
  elif [ "$rc" -eq 0 ]; then
    ts_record "$name" "PASSED ($detail)" "$p" "$f" "$s" "$secs" "$cpu"
  else
    ts_record "$name" "FAILED ($detail; exit $rc; log $log)" "$p" "$f" "$s" "$secs" "$cpu"
  fi
  return 0
}

# The phases' lines again, then the one total line; exit status 1 when a test or phase failed.
ts_summary() {
  echo "== summary"
  local r any_failed=0
  # (bash 3.2 with `set -u` calls an empty "${a[@]}" unbound: hence the ${…+…} form.)
  for r in ${TS_RESULTS[@]+"${TS_RESULTS[@]}"}; do
    echo "  $r"
    case "$r" in *": FAILED"*) any_failed=1 ;; esac
  done
  echo "total time: $(ts_duration $(($(date +%s) - TS_START))) (cpu of the phases: $(ts_duration "$TS_CPU"))"
  local total="$TS_PASSED passed, $TS_FAILED failed"
  [ "$TS_SKIPPED" -gt 0 ] && total="$total, $TS_SKIPPED skipped"
  echo "$total"
  [ "$TS_FAILED" -eq 0 ] && [ "$any_failed" -eq 0 ]
}
