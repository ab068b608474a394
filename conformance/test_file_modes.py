"""The SQLite database holds every password hash: `touchsync` creates it, its -wal and its -shm
readable by their owner only (0600, whatever the umask), and a server started on an existing
database that others can read says so in one start-up line naming the file, its mode and the
chmod to run (docs/deploy.md)."""
import os
import shutil
import stat
import tempfile
import time

from test_cli import run, start_collecting


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_database_and_its_wal_and_shm_are_created_0600():
    tmp = tempfile.mkdtemp()
    old_umask = os.umask(0o022)  # the usual umask, which gives SQLite's own files 0644
    try:
        db = os.path.join(tmp, "touchsync.sqlite")
        proc, _, lines = start_collecting(["--database", db])
        try:
            for f in (db, db + "-wal", db + "-shm"):
                assert os.path.exists(f), f"{f} exists while the server runs"
                assert mode(f) == 0o600, f"{f} is {oct(mode(f))}"
            assert not [l for l in lines if "chmod 600" in l], "".join(lines)
        finally:
            proc.terminate()
            proc.wait(timeout=15)
    finally:
        os.umask(old_umask)
        shutil.rmtree(tmp, ignore_errors=True)


def test_a_database_others_can_read_is_reported_at_start_up_with_the_chmod():
    tmp = tempfile.mkdtemp()
    try:
        db = os.path.join(tmp, "touchsync.sqlite")
        m = run("migrate", "--database", db)
        assert m.returncode == 0, m.stderr
        os.chmod(db, 0o644)  # as SQLite left it before, or a copy made by hand
        proc, _, lines = start_collecting(["--database", db])
        try:
            deadline = time.time() + 10
            found = []
            while time.time() < deadline and not found:
                found = [l for l in list(lines) if "chmod 600" in l]
                time.sleep(0.05)
            assert len(found) == 1, "".join(lines)
            line = found[0]
            assert f"{db} (0644)" in line, line
            assert "password hashes" in line, line
            assert f"run chmod 600 {db}" in line, line
        finally:
            proc.terminate()
            proc.wait(timeout=15)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
