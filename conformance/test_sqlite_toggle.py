"""`bench/sqlite-toggle/sqlite-toggle.c` (bench/README.md, "The durable toggle's limit"): SQLite alone
running the server's toggle statements, the limit the server's toggle is measured against. Built with
the C compiler and run for a moment on a database `touchsync bench-seed` made, in both commit shapes
(64 toggles per transaction and 1). A schema change that breaks its statements must fail here, not in a
benchmark sitting; and what it leaves behind must be what the server's toggles leave: every heart
counted in its element's `reaction_count`, a notification for each heart on another user's element, a
database that passes SQLite's own checks. A functional check, not a measurement."""
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile

import pytest

from test_cli import BIN, ROOT

SOURCE = os.path.join(ROOT, "bench", "sqlite-toggle", "sqlite-toggle.c")


def compiler():
    return shutil.which("cc") or shutil.which("clang")


@pytest.fixture(scope="module")
def built():
    cc = compiler()
    if cc is None:
        pytest.skip("no C compiler (cc or clang) on PATH: bench/sqlite-toggle is built with one")
    out = tempfile.mkdtemp(prefix="sqlite-toggle-")
    exe = os.path.join(out, "sqlite-toggle")
    r = subprocess.run([cc, "-O2", "-Wall", "-Werror", "-o", exe, SOURCE, "-lsqlite3"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    yield exe
    shutil.rmtree(out, ignore_errors=True)


@pytest.fixture(scope="module")
def seed():
    out = tempfile.mkdtemp(prefix="sqlite-toggle-seed-")
    r = subprocess.run([BIN, "bench-seed", "--database", os.path.join(out, "bench.sqlite"), "--out", out, "--log-level", "warning"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    yield out
    shutil.rmtree(out, ignore_errors=True)


def counts(db, room):
    c = sqlite3.connect(db)
    try:
        hearts = c.execute("SELECT COUNT(*) FROM reactions r JOIN elements e ON e.id = r.element_id WHERE e.room_id = ?", (room,)).fetchone()[0]
        counted = c.execute("SELECT COALESCE(SUM(reaction_count), 0) FROM elements WHERE room_id = ?", (room,)).fetchone()[0]
        notified = c.execute("SELECT COUNT(*) FROM notifications WHERE room_id = ? AND type = 'element_reaction'", (room,)).fetchone()[0]
        integrity = c.execute("PRAGMA integrity_check").fetchone()[0]
        dangling = c.execute("PRAGMA foreign_key_check").fetchall()
        return hearts, counted, notified, integrity, dangling
    finally:
        c.close()


@pytest.mark.parametrize("batch", [64, 1])
def test_sqlite_alone_runs_the_servers_toggle_and_leaves_what_the_server_leaves(built, seed, batch):
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "bench.sqlite")
        shutil.copy(os.path.join(seed, "bench.sqlite"), db)
        room = open(os.path.join(seed, "toggle-room.txt")).read().split()[0]
        before = counts(db, room)
        r = subprocess.run([built, "--database", db, "--room", room, "--seconds", "1", "--batch", str(batch), "--seed", "7"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        lines = [l for l in r.stdout.splitlines() if l.startswith("RESULT ")]
        assert len(lines) == 1, r.stdout
        res = json.loads(lines[0][len("RESULT "):])
        assert res["batch"] == batch and res["errors"] == 0
        assert res["toggles"] > 0 and res["added"] + res["removed"] == res["toggles"], res
        # Whole batches only: each commit holds `batch` toggles.
        assert res["commits"] * batch == res["toggles"], res
        assert res["rps"] > 0 and res["p99_ms"] >= res["p50_ms"] > 0 and res["server_cpu_us_per_req"] > 0, res

        hearts, counted, notified, integrity, dangling = counts(db, room)
        assert hearts - before[0] == res["added"] - res["removed"], (before, hearts, res)
        assert counted == hearts, "every heart is counted in its element's reaction_count"
        # A notification per added heart on another user's element (the seed's toggle elements are
        # not the toggling users' own), never more.
        assert 0 < notified - before[2] <= res["added"], (before, notified, res)
        assert integrity == "ok" and dangling == []


def test_a_room_it_cannot_toggle_in_is_one_clear_line(built, seed):
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "bench.sqlite")
        shutil.copy(os.path.join(seed, "bench.sqlite"), db)
        r = subprocess.run([built, "--database", db, "--room", "no-such-room", "--seconds", "1"], capture_output=True, text=True, timeout=30)
        assert r.returncode == 1 and r.stdout == "", r.stdout + r.stderr
        assert r.stderr.strip() == "sqlite-toggle: room no-such-room has no members or no elements", r.stderr
        r = subprocess.run([built, "--database", db], capture_output=True, text=True, timeout=30)
        assert r.returncode == 2 and r.stderr.startswith("usage: sqlite-toggle --database FILE --room ID"), r.stderr
