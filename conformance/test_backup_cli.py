"""`touchsync backup` and `touchsync restore` as an operator runs them, against a server running in
another process (docs/backup.md)."""
import os
import shutil
import sqlite3
import subprocess
import tempfile
import threading
import time
import uuid

import pytest
import requests

from test_cli import run, start


def test_backup_while_serving_restore_refused_naming_the_server_pid_then_restored():
    tmp = tempfile.mkdtemp()
    try:
        db = os.path.join(tmp, "touchsync.sqlite")
        proc, base = start(db)
        try:
            reg = requests.post(base + "/api/auth/register", json={"username": "keeper", "password": "password-123"})
            assert reg.status_code == 201, reg.text
            token = reg.json()["data"]["token"]
            room = requests.post(base + "/api/rooms", json={"name": "r"}, headers={"Authorization": "Bearer " + token}).json()["data"]["id"]

            # Writes keep coming while the backup runs; every one answered before it is in it.
            answered, stop = [], threading.Event()

            def writes():
                while not stop.is_set():
                    r = requests.post(base + f"/api/rooms/{room}/elements", headers={"Authorization": "Bearer " + token},
                                      json={"type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1})
                    assert r.status_code == 201, r.text
                    answered.append(r.json()["data"]["id"])
            writer = threading.Thread(target=writes)
            writer.start()
            try:
                deadline = time.time() + 30
                while len(answered) < 20 and writer.is_alive() and time.time() < deadline:
                    time.sleep(0.01)
                assert len(answered) >= 20, "the writes did not get going"
                before = list(answered)
                backup = os.path.join(tmp, "backup.sqlite")
                b = run("backup", backup, "--database", db)
            finally:
                stop.set()
                writer.join(timeout=30)
            assert b.returncode == 0, b.stderr
            assert f"wrote {backup}" in b.stdout and "integrity_check ok" in b.stdout, b.stdout
            with sqlite3.connect(f"file:{backup}?mode=ro", uri=True) as c:
                copied = {row[0] for row in c.execute("SELECT id FROM elements")}
                assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            assert set(before) <= copied

            # The server holds the database: restore refuses, naming its pid, and touches nothing.
            r = run("restore", backup, "--database", db)
            assert r.returncode != 0
            assert f"process {proc.pid} has the database open" in r.stderr, r.stderr
            assert not [n for n in os.listdir(tmp) if "before-restore" in n]
        finally:
            proc.terminate()
            assert proc.wait(timeout=15) == 0

        r = run("restore", backup, "--database", db)
        assert r.returncode == 0, r.stderr
        assert "restored" in r.stdout and "before-restore-" in r.stdout, r.stdout
        assert [n for n in os.listdir(tmp) if ".before-restore-" in n and not n.endswith(("-wal", "-shm"))]

        # A server on the restored file: the backed-up account logs in, its room and elements are there.
        proc, base = start(db)
        try:
            login = requests.post(base + "/api/auth/login", json={"username": "keeper", "password": "password-123"})
            assert login.status_code == 200, login.text
            h = {"Authorization": "Bearer " + login.json()["data"]["token"]}
            ids = {e["id"] for e in requests.get(base + f"/api/rooms/{room}/elements", headers=h).json()["data"]}
            assert ids == copied
        finally:
            proc.terminate()
            assert proc.wait(timeout=15) == 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_postgres_backup_and_restore_name_pg_dump_and_pg_restore_and_the_command_works():
    url = "postgres://ts:secret@db.example:5433/touchsync"
    b = run("backup", "/tmp/ts.dump", "--database-url", url)
    assert b.returncode != 0
    assert "pg_dump --format=custom --file=/tmp/ts.dump --host=db.example --port=5433 --username=ts --dbname=touchsync" in b.stderr, b.stderr
    r = run("restore", "/tmp/ts.dump", "--database-url", url)
    assert r.returncode != 0
    assert "pg_restore --clean --if-exists --no-owner --host=db.example --port=5433 --username=ts --dbname=touchsync /tmp/ts.dump" in r.stderr
    assert "secret" not in b.stderr + r.stderr, "the password is never printed"

    server_url = os.environ.get("TOUCHSYNC_TEST_POSTGRES_URL")
    if not server_url or not shutil.which("pg_dump"):
        pytest.skip("running the printed pg_dump needs TOUCHSYNC_TEST_POSTGRES_URL (scripts/services.sh) and pg_dump on PATH")
    name = "ts_backup_" + uuid.uuid4().hex[:10]
    subprocess.run(["psql", server_url, "-qc", f"CREATE DATABASE {name}"], check=True, capture_output=True)
    try:
        db_url = server_url.rsplit("/", 1)[0] + "/" + name
        assert run("migrate", "--database-url", db_url).returncode == 0
        tmp = tempfile.mkdtemp()
        dump = os.path.join(tmp, "ts.dump")
        advice = run("backup", dump, "--database-url", db_url).stderr
        command = next(line.strip() for line in advice.splitlines() if line.strip().startswith("pg_dump "))
        done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        listing = subprocess.run(["pg_restore", "--list", dump], capture_output=True, text=True)
        assert "schema_migrations" in listing.stdout
        shutil.rmtree(tmp, ignore_errors=True)
    finally:
        subprocess.run(["psql", server_url, "-qc", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], capture_output=True)


def test_restore_refuses_a_backup_whose_schema_the_migrations_do_not_make_naming_each_difference():
    tmp = tempfile.mkdtemp()
    try:
        db = os.path.join(tmp, "touchsync.sqlite")
        m = run("migrate", "--database", db)
        assert m.returncode == 0, m.stderr
        honest = os.path.join(tmp, "honest.sqlite")
        b = run("backup", honest, "--database", db)
        assert b.returncode == 0, b.stderr

        # What someone who can write a backup file could add: a table, and a trigger on users that
        # copies every new password hash into it.
        tampered = os.path.join(tmp, "tampered.sqlite")
        shutil.copy(honest, tampered)
        with sqlite3.connect(tampered) as c:
            c.executescript("""
                CREATE TABLE stash (username TEXT, hash TEXT);
                CREATE TRIGGER users_copy AFTER INSERT ON users BEGIN
                    INSERT INTO stash VALUES (NEW.username, NEW.password_hash);
                END;
            """)
        r = run("restore", tampered, "--database", db)
        assert r.returncode != 0, r.stdout
        assert "trigger users_copy on users is not made by any migration" in r.stderr, r.stderr
        assert "table stash is not made by any migration" in r.stderr, r.stderr
        assert not [n for n in os.listdir(tmp) if "before-restore" in n], "nothing was replaced"
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
            assert c.execute("SELECT count(*) FROM sqlite_master WHERE name IN ('stash', 'users_copy')").fetchone()[0] == 0

        # The untouched backup of the same database is restored.
        r = run("restore", honest, "--database", db)
        assert r.returncode == 0, r.stderr
        assert "restored" in r.stdout, r.stdout
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
