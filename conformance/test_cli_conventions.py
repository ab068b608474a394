"""The `touchsync` binary behaves as a command-line tool is expected to: `--version`, `--help` on every
subcommand (never run as exec's child command), exact `migrate` messages, no JWT-secret advice from
the one-shot commands, environment settings spelled as people write them and misspelt ones named
at start-up, and a `--demo` tour whose printed `curl` hearts the photo on every start."""
import json
import os
import re
import subprocess
import tempfile

import requests

from conftest import ROOT
from test_cli import BIN, start_collecting

SUBCOMMANDS = ["serve", "migrate", "token", "exec", "export", "import", "version", "cert"]


def run_clean(*args, env=None, cwd=ROOT, timeout=60):
    """The binary with no TOUCHSYNC_* of the caller's (scripts/test exports some) but `env`."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("TOUCHSYNC_")}
    e["TOUCHSYNC_AUTH_PASSWORD_ITERATIONS"] = "1000"
    e.update(env or {})
    return subprocess.run([BIN, *args], cwd=cwd, env=e, capture_output=True, text=True, timeout=timeout)


def test_version_flag_prints_the_version_the_server_reports():
    flag = run_clean("--version")
    assert flag.returncode == 0, flag.stderr
    word = run_clean("version")
    assert flag.stdout == word.stdout and re.fullmatch(r"touchsync \d+\.\d+\.\d+\n", flag.stdout), (flag.stdout, word.stdout)
    proc, base, _ = start_collecting(["--database", ":memory:"])
    try:
        health = requests.get(base + "/health").json()
        assert "touchsync " + health["version"] + "\n" == flag.stdout, health
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def test_help_of_every_subcommand_prints_help_and_runs_nothing():
    for sub in SUBCOMMANDS:
        r = run_clean(sub, "--help", timeout=30)
        assert r.returncode == 0, f"{sub} --help exited {r.returncode}: {r.stdout}{r.stderr}"
        assert "USAGE: touchsync " + sub in r.stdout, f"{sub} --help: {r.stdout}{r.stderr}"
        assert "listening on" not in r.stdout + r.stderr and "touchsync exec:" not in r.stderr, f"{sub} --help started something"
    # After `--`, --help belongs to the command exec runs.
    r = run_clean("exec", "--", "sh", "-c", 'test "$1" = --help && test -n "$TOUCHSYNC_URL"', "sh", "--help", timeout=90)
    assert r.returncode == 0, r.stdout + r.stderr


def test_migrate_says_what_it_applied_then_that_the_database_is_up_to_date():
    tmp = tempfile.mkdtemp()
    db = os.path.join(tmp, "db.sqlite")
    names = sorted(f.split("_")[0] for f in os.listdir(os.path.join(ROOT, "Migrations")) if f.endswith(".sql"))
    first = run_clean("migrate", "--database", db)
    assert first.returncode == 0, first.stderr
    assert f"applied {len(names)} migrations ({names[0]}…{names[-1]}) to {db}\n" in first.stdout, first.stdout
    again = run_clean("migrate", "--database", db)
    assert again.returncode == 0 and again.stdout.endswith(f"database {db} is up to date\n"), again.stdout


def test_one_shot_commands_say_nothing_about_the_jwt_secret():
    """migrate, token, export and import use the secret stored beside the database (token signs
    with it) without the advice meant for whoever runs a server; serve still gives it."""
    tmp = tempfile.mkdtemp()
    db = os.path.join(tmp, "db.sqlite")
    proc, base, lines = start_collecting(["--database", db], env={"TOUCHSYNC_JWT_SECRET": None, "TOUCHSYNC_ENV": None})
    try:
        assert requests.post(base + "/api/auth/register", json={"username": "quiet", "password": "password-123"}).status_code == 201
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    assert any("JWT secret" in l for l in lines), "serve warns: " + "".join(lines)
    snapshot = os.path.join(tmp, "snapshot.json")
    for args in (["migrate"], ["token", "quiet"], ["export", snapshot], ["import", snapshot, "--replace"]):
        r = run_clean(*args, "--database", db)
        assert r.returncode == 0, f"{args}: {r.stderr}"
        assert "secret" not in (r.stdout + r.stderr).lower(), f"{args}: {r.stdout}{r.stderr}"


def test_allow_eio3_is_set_by_the_name_people_write_and_by_the_spelled_out_one():
    def handshake(env):
        proc, base, _ = start_collecting(["--database", ":memory:"], env=env)
        try:
            return requests.get(base + "/socket.io/?EIO=3&transport=polling").status_code
        finally:
            proc.terminate()
            proc.wait(timeout=15)
    assert handshake({"TOUCHSYNC_REALTIME_ALLOW_EIO3": "true"}) == 200
    assert handshake({"TOUCHSYNC_REALTIME_ALLOW_E_I_O3": "true"}) == 200
    assert handshake({}) == 400


def test_misspelt_environment_variables_are_named_in_one_warning_with_the_closest_setting():
    tmp = tempfile.mkdtemp()
    env = {"TOUCHSYNC_REALTIME_ALLOW_EIO": "1", "TOUCHSYNC_SERVER_PROT": "4000",
           # Read by the programs, not settings: never reported.
           "TOUCHSYNC_ENV": "development", "TOUCHSYNC_URL": "http://127.0.0.1:1", "TOUCHSYNC_TOKEN_ALICE": "x",
           "TOUCHSYNC_ROOM_DESIGN": "y", "TOUCHSYNC_TEST_DATABASE": "sqlite", "TOUCHSYNC_JWT_SECRET": "cli-test-secret-0123456789abcdef",
           "TOUCHSYNC_REALTIME_ALLOW_EIO3": "false"}
    r = run_clean("migrate", "--database", os.path.join(tmp, "db.sqlite"), env=env)
    assert r.returncode == 0, r.stderr
    warnings = [l for l in (r.stdout + r.stderr).splitlines() if "TOUCHSYNC_" in l and "ignoring" in l]
    assert len(warnings) == 1, r.stdout + r.stderr
    line = warnings[0]
    assert "TOUCHSYNC_REALTIME_ALLOW_EIO (did you mean TOUCHSYNC_REALTIME_ALLOW_EIO3?)" in line, line
    assert "TOUCHSYNC_SERVER_PROT (did you mean TOUCHSYNC_SERVER_PORT?)" in line, line
    for known in ("TOUCHSYNC_ENV", "TOUCHSYNC_URL", "TOUCHSYNC_TOKEN_ALICE", "TOUCHSYNC_ROOM_DESIGN", "TOUCHSYNC_TEST_DATABASE",
                  "TOUCHSYNC_JWT_SECRET", "TOUCHSYNC_REALTIME_ALLOW_EIO3 "):
        assert known not in line, (known, line)
    # No misspelling, no warning.
    quiet = run_clean("migrate", "--database", os.path.join(tmp, "db.sqlite"), env={"TOUCHSYNC_ENV": "development"})
    assert "ignoring" not in quiet.stdout + quiet.stderr, quiet.stdout + quiet.stderr


def test_the_demo_tour_curl_hearts_the_photo_on_every_start():
    """The tour's `curl` toggles bob's heart; started again on the same database, the tour's printed
    command must add the heart again, not take back the one the last tour left."""
    tmp = tempfile.mkdtemp()
    db = os.path.join(tmp, "tour.sqlite")
    for attempt in (1, 2):
        proc, base, lines = start_collecting(["--demo", "--database", db],
                                             until=lambda ls: any(l.strip().startswith("curl -X POST") for l in ls))
        try:
            curl = next(l for l in lines if l.strip().startswith("curl -X POST")).strip()
            r = subprocess.run(["bash", "-c", curl + " -s"], capture_output=True, text=True, timeout=30)
            assert r.returncode == 0, r.stderr
            answer = json.loads(r.stdout)
            assert answer["data"]["action"] == "added", f"start {attempt}: {r.stdout}"
        finally:
            proc.terminate()
            proc.wait(timeout=15)


def test_the_install_command_builds_only_what_touchsync_needs():
    """A plain `swift build -c release` also builds the library targets that import XCTest (test
    support), which a machine without XCTest cannot compile; README's install command names the
    product, whose targets (read from `swift package describe`) import no XCTest. The release
    build itself takes too long for the suite; this checks what it would compile."""
    import shutil
    if not shutil.which("swift"):
        import pytest
        pytest.skip("skipped: no swift on PATH to describe the package")
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    install = readme[readme.index("## Install"):]
    assert "swift build -c release --static-swift-stdlib --product touchsync" in install
    assert "`libcurl4`" in install
    d = json.loads(subprocess.run(["swift", "package", "describe", "--type", "json"], cwd=ROOT, capture_output=True,
                                  text=True, timeout=300, check=True).stdout)
    targets = {t["name"]: t for t in d["targets"]}

    def imports_xctest(t):
        for src in t.get("sources", []):
            with open(os.path.join(ROOT, t["path"], src), errors="replace") as f:
                if re.search(r"^import XCTest", f.read(), re.M):
                    return True
        return False
    support = [n for n, t in targets.items() if t["type"] != "test" and imports_xctest(t)]
    assert support, "no library target imports XCTest: the note in README's install section is stale"
    product = next(p for p in d["products"] if p["name"] == "touchsync")
    needed, todo = set(), list(product["targets"])
    while todo:
        name = todo.pop()
        if name not in needed and name in targets:
            needed.add(name)
            todo += targets[name].get("target_dependencies", [])
    assert not needed & set(support), f"the touchsync product depends on XCTest users: {needed & set(support)}"
