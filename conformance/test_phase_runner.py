"""scripts/test's phase runner (scripts/lib/phases.sh) on phases with known output: a failing
phase does not stop the ones after it, every phase ends with its PASSED / FAILED / SKIPPED line, and
the run ends with exactly one line summing the tests each tool reported, exiting non-zero when
anything failed. The phases print what XCTest, pytest, Autobahn's runner and fuzz/run.sh print."""
import os
import re
import subprocess
import tempfile

from conftest import ROOT

LIB = os.path.join(ROOT, "scripts", "lib", "phases.sh")


def run_phases(body, env=None):
    logs = tempfile.mkdtemp(prefix="touchsync-phases-")
    script = f"""set -euo pipefail
TS_LOG_DIR={logs}
. {LIB}
{body}
ts_summary
"""
    e = {k: v for k, v in os.environ.items() if k != "TOUCHSYNC_TEST_PHASES"}
    e.update(env or {})
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60, env=e)
    return r, r.stdout.strip().splitlines()


SECONDS = r"(?:\d+m\d\ds|\d+s)"
# "  [1m05s, cpu 1m52s]": the wall-clock time, then the CPU time of the phase's processes (none for
# a phase that did not run).
DURATION = re.compile(r"  \[(" + SECONDS + r")(?:, cpu (" + SECONDS + r"))?\]$")


def results(lines):
    """The phases' lines without their duration (each must have one), as printed before the summary."""
    out = []
    for l in lines:
        if l.startswith("== summary"):
            break
        if re.match(r"^[\w-]+: (PASSED|FAILED|SKIPPED)", l):
            assert DURATION.search(l), "a phase line without its duration: " + l
            out.append(DURATION.sub("", l))
    return out


XCTEST_FAILING = r"""
xctest_failing() {
  echo "Test Suite 'SomeTests' started"
  echo "/x/SomeTests.swift:10: error: SomeTests.testA : XCTAssertEqual failed"
  echo "Executed 3 tests, with 1 failure (0 unexpected) in 0.1 (0.1) seconds"
  echo "Test Suite 'All tests' failed"
  echo "Executed 40 tests, with 2 tests skipped and 1 failure (0 unexpected) in 2.0 (2.0) seconds"
  return 1
}
"""
PYTEST_PASSING = r"""
pytest_passing() {
  echo "....s.."
  echo "SKIPPED [1] conformance/test_x.py:3: chromium not found"
  echo "12 passed, 3 skipped in 4.56s"
}
"""


def test_a_failing_phase_does_not_stop_the_later_ones_and_the_total_sums_the_tests():
    r, lines = run_phases(XCTEST_FAILING + PYTEST_PASSING + r"""
autobahn_ok() { echo "cases: 301"; echo "behavior: {'OK': 301}"; }
fuzz_one_crash() { echo "fuzz-json: OK 15s, 100 runs, cov: 10"; echo "fuzz-http: CRASH (exit 1), artifacts in x"; return 1; }
skipped_check() { echo "not macOS: the Darwin SDK is not here"; return 77; }
crashed() { echo "Segmentation fault"; return 139; }
ts_phase xctest swift-test xctest_failing
ts_phase pytest conformance pytest_passing
ts_phase autobahn autobahn autobahn_ok
ts_phase fuzz fuzz fuzz_one_crash
ts_phase single check-darwin-typecheck skipped_check
ts_phase setup build crashed
ts_skip swift-test-postgres "TOUCHSYNC_TEST_POSTGRES_URL is not set"
""")
    out = "\n".join(lines)
    assert r.returncode == 1, out
    lines = results(lines) + lines[-2:]
    assert "swift-test: FAILED (37 passed, 1 failed, 2 skipped; exit 1;" in out, out
    # Every phase after the failing one ran and reported.
    assert "conformance: PASSED (12 passed, 0 failed, 3 skipped)" in lines, out
    assert "autobahn: PASSED (301 passed, 0 failed)" in lines, out
    assert any(l.startswith("fuzz: FAILED (1 passed, 1 failed;") for l in lines), out
    assert "check-darwin-typecheck: SKIPPED: not macOS: the Darwin SDK is not here" in lines, out
    assert any(l.startswith("build: FAILED (0 passed, 1 failed; exit 139;") for l in lines), out
    assert "swift-test-postgres: SKIPPED: TOUCHSYNC_TEST_POSTGRES_URL is not set" in lines, out
    # Exactly one total line, the last, summing the tools' counts: 37+12+301+1 passed; 1+1+1 failed;
    # 2+3 skipped tests + the two skipped phases.
    assert lines[-1] == "351 passed, 3 failed, 7 skipped", out
    assert sum(1 for l in lines if l.endswith(" skipped") and " passed, " in l and ":" not in l) == 1, out


def test_a_green_run_exits_0_and_ends_with_the_total_not_the_last_tools_line():
    r, lines = run_phases(PYTEST_PASSING + r"""
one() { echo "all good"; }
ts_phase pytest conformance pytest_passing
ts_phase single check-availability one
""")
    assert r.returncode == 0, r.stdout + r.stderr
    assert lines[-1] == "13 passed, 0 failed, 3 skipped", lines
    assert re.fullmatch(r"total time: " + SECONDS + r" \(cpu of the phases: " + SECONDS + r"\)", lines[-2]), lines
    assert "check-availability: PASSED (1 passed, 0 failed)" in results(lines)


def seconds(text):
    m = re.fullmatch(r"(?:(\d+)m)?(\d+)s", text)
    return int(m.group(1) or 0) * 60 + int(m.group(2))


def test_a_phase_reports_its_cpu_time_and_a_background_phase_its_own_end_not_its_collection():
    # burner: about 1.5 s of CPU in a child process the phase waits for. quick: a background phase
    # that ends at once; waiter: a foreground phase that waits until quick has ended, then 3 s more,
    # before quick is collected. CPU seconds hold on a loaded machine; the wall clock is compared
    # only between phases of this run.
    r, lines = run_phases(r"""
burn() { python3 -c 'import time
while time.process_time() < 1.5: pass'; }
done_then_wait() { ts_wait_phase quick; sleep 3; }
ts_phase single burner burn
ts_phase_start single quick true
ts_phase single waiter done_then_wait
ts_phase_finish quick
""")
    assert r.returncode == 0, r.stdout + r.stderr
    found = {l.split(":")[0]: DURATION.search(l) for l in lines if re.match(r"^(burner|quick|waiter): PASSED", l)}
    assert set(found) == {"burner", "quick", "waiter"}, lines
    (burner_wall, burner_cpu), (quick_wall, _), (waiter_wall, waiter_cpu) = (
        [seconds(g) for g in found[n].groups()] for n in ("burner", "quick", "waiter"))
    assert burner_cpu >= 1, lines
    assert waiter_wall >= 3 and waiter_cpu == 0, lines
    assert quick_wall <= waiter_wall - 2, f"a background phase's duration ends when it ended, not when collected: {lines}"
    m = re.fullmatch(r"total time: " + SECONDS + r" \(cpu of the phases: (" + SECONDS + r")\)", lines[-2])
    assert m and seconds(m.group(1)) >= burner_cpu, lines


def test_touchsync_test_phases_runs_only_the_phases_named_and_says_so_for_the_others():
    r, lines = run_phases(PYTEST_PASSING + r"""
marker() { echo ran > "$MARKER"; }
ts_phase single build marker
ts_phase pytest conformance pytest_passing
""", env={"TOUCHSYNC_TEST_PHASES": "conformance", "MARKER": os.path.join(tempfile.mkdtemp(), "m")})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "build: SKIPPED: not in TOUCHSYNC_TEST_PHASES" in results(lines)
    assert lines[-1] == "12 passed, 0 failed, 4 skipped", lines


def test_a_background_phase_keeps_its_output_together_and_is_counted():
    """ts_phase_start runs a phase beside the next one; its output appears in one piece when
    ts_phase_finish collects it, and its tests and duration are on its line like any other."""
    r, lines = run_phases(PYTEST_PASSING + r"""
slow() { echo "bg-1"; sleep 1; echo "bg-2"; echo "5 passed, 1 failed in 1.00s"; return 1; }
fg() { echo "fg-1"; echo "fg-2"; }
ts_phase_start pytest conformance-serial slow
ts_phase single check-availability fg
ts_phase_finish conformance-serial
""")
    assert r.returncode == 1, r.stdout + r.stderr
    # The background phase's lines come together, after the foreground phase's.
    assert lines.index("bg-1") + 1 == lines.index("bg-2") and lines.index("fg-2") < lines.index("bg-1"), lines
    got = results(lines)
    assert any(l.startswith("conformance-serial: FAILED (5 passed, 1 failed; exit 1;") for l in got), lines
    assert "check-availability: PASSED (1 passed, 0 failed)" in got, lines
    assert lines[-1] == "6 passed, 1 failed", lines


def test_a_background_phase_can_wait_for_another_and_both_are_counted():
    """ts_wait_phase inside a background phase waits for the earlier background phase to end (the
    macOS checks: check-availability reads what check-darwin-typecheck wrote), and returns 1 at
    once for a phase that was not started in this run."""
    r, lines = run_phases(r"""
writer() { sleep 1; echo written > "$TS_LOG_DIR/shared.txt"; echo "writer done"; }
reader() { ts_wait_phase check-darwin-typecheck && cat "$TS_LOG_DIR/shared.txt"; }
alone() { if ts_wait_phase never-started; then echo "waited"; else echo "not started"; fi; }
ts_phase_start single check-darwin-typecheck writer
ts_phase_start single check-availability reader
ts_phase_start single lonely alone
ts_phase_finish check-availability
ts_phase_finish check-darwin-typecheck
ts_phase_finish lonely
""")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "written" in lines and "not started" in lines, lines
    got = results(lines)
    assert "check-availability: PASSED (1 passed, 0 failed)" in got and "check-darwin-typecheck: PASSED (1 passed, 0 failed)" in got, lines
    assert lines[-1] == "3 passed, 0 failed", lines


def test_scripts_test_runs_every_phase_through_the_runner_and_ci_calls_it():
    """The script itself: no phase outside ts_phase/ts_skip after the set-up, the macOS checks are
    phases, and .ci/run runs exactly ./scripts/test."""
    with open(os.path.join(ROOT, "scripts", "test")) as f:
        script = f.read()
    phases = script[script.index("# ---- the phases"):]
    code = "\n".join(l for l in phases.splitlines() if not l.lstrip().startswith("#"))
    assert "set -e\n" not in code and "exit " not in code, "a phase must not end the run"
    for name in ("swift-test", "conformance", "swift-test-poll", "conformance-poll", "swift-test-postgres",
                 "conformance-postgres", "fuzz", "autobahn", "autobahn-tls", "check-availability", "check-darwin-typecheck"):
        assert re.search(rf"(ts_phase(_start)? \w+|ts_skip|for check in[\w -]*) {name}[ ;\n]", code), name
    assert phases.rstrip().endswith("ts_summary")
    with open(os.path.join(ROOT, ".ci", "run")) as f:
        assert [l for l in f.read().splitlines() if l and not l.startswith("#") and not l.startswith("set ") and not l.startswith("cd ")] == ["exec ./scripts/test"]
