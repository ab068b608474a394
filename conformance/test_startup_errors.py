"""Bad start-up input, through the real binary: each gets one clear line on stderr and a non-zero
exit, creates nothing first, and never crashes; a second server on one SQLite file is refused
with the first one's pid; `restore` names the process that really holds the database; the start-up
log names the readiness backend."""
import os
import subprocess
import tempfile

import pytest
import requests

from test_cli import BASE_ENV, BIN, start


def run_in(cwd, *args):
    env = dict(os.environ)
    env.update(BASE_ENV)
    env["TOUCHSYNC_LOG_LEVEL"] = "warning"
    for k in ("TOUCHSYNC_DATABASE", "TOUCHSYNC_PORT", "TOUCHSYNC_DATABASE_URL"):
        env.pop(k, None)
    return subprocess.run([BIN, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=30)


CASES = [
    (["serve", "--database", "./"], "is a folder"),
    (["token", "alice", "--database", "./"], "is a folder"),
    (["serve", "--database", ""], "is empty"),
    (["serve", "--database", "afile/x.sqlite"], "afile is a file, not a folder"),
    (["serve", "--database", "/proc/x.sqlite"], "cannot open the lock file"),
    (["serve", "--port", "-1"], "a TCP port is 1 to 65535"),
    (["serve", "--port", "99999"], "a TCP port is 1 to 65535"),
    (["token", "alice", "--database", "./nope/x.sqlite"], "no database at ./nope/x.sqlite"),
]


@pytest.mark.parametrize("args,says", CASES, ids=[" ".join(a) or "empty" for a, _ in CASES])
def test_each_bad_input_gets_one_line_and_creates_nothing(args, says):
    with tempfile.TemporaryDirectory() as d:
        open(os.path.join(d, "afile"), "w").close()
        r = run_in(d, *args)
        assert r.returncode not in (0, -4, 132, 134), f"{args}: exit {r.returncode}\n{r.stderr}"
        assert "crashed" not in r.stderr and "Backtrac" not in r.stderr, r.stderr
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        assert len(lines) == 1, f"{args}: one line, got:\n{r.stderr}"
        assert says in lines[0], lines[0]
        assert "NSCocoaErrorDomain" not in lines[0] and "not an error" not in lines[0], lines[0]
        assert sorted(os.listdir(d)) == ["afile"], f"{args} created {os.listdir(d)}"


def test_a_second_server_on_one_sqlite_file_is_refused_naming_the_first():
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "one.sqlite")
        first, base = start(db)
        try:
            r = run_in(d, "serve", "--port", "0", "--database", db)
            assert r.returncode == 1, r.stderr
            lines = [l for l in r.stderr.splitlines() if l.strip()]
            assert len(lines) == 1, r.stderr
            assert f"process {first.pid} is already serving" in lines[0], lines[0]
            assert "split realtime" in lines[0] and "--redis-url" in lines[0], lines[0]
            assert requests.get(base + "/health", timeout=5).status_code == 200, "the first server is untouched"
            # A one-shot command on the same file still works, and afterwards restore names the
            # server, not that command (which wrote its pid in the shared lock last and exited).
            token = run_in(d, "token", "nobody", "--database", db)
            assert "no user named nobody" in token.stderr, token.stderr
            backup = os.path.join(d, "copy.sqlite")
            assert run_in(d, "backup", "--database", db, backup).returncode == 0
            restore = run_in(d, "restore", "--database", db, backup)
            assert restore.returncode != 0
            assert f"process {first.pid} has the database open" in restore.stderr, restore.stderr
        finally:
            first.terminate()
            first.wait(timeout=15)
        # Once the first has stopped, the file can be served again.
        again, _ = start(db)
        again.terminate()
        again.wait(timeout=15)


def test_the_start_up_log_names_the_readiness_backend():
    proc = subprocess.Popen([BIN, "serve", "--port", "0", "--database", ":memory:"], env=dict(os.environ, **BASE_ENV, TOUCHSYNC_LOG_LEVEL="info"),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = []
    try:
        for line in proc.stdout:
            seen.append(line)
            if "HTTP server listening" in line:
                break
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    listening = [l for l in seen if "HTTP server listening" in l]
    assert listening, "".join(seen)
    assert any(f"poller={p}" in listening[0] for p in ("epoll", "kqueue", "poll")), listening[0]


def test_a_misspelt_key_in_a_config_file_gets_did_you_mean():
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "touchsync.json"), "w") as f:
            f.write('{"server": {"prot": 3001}}')
        r = run_in(d, "serve", "--config", "touchsync.json", "--database", ":memory:")
        assert r.returncode == 1, r.stderr
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        assert len(lines) == 1 and "unknown setting server.prot (did you mean server.port?)" in lines[0], r.stderr
