"""Starts a real `touchsync serve` on a free port for the conformance suite.

The binary comes from TOUCHSYNC_BIN (scripts/test sets it); the server runs on a fresh
database in a temporary directory, with cheap password hashing and a small per-socket
outbound bound so that the slow-consumer test finishes quickly.
"""
import os
import re
import subprocess
import tempfile
import threading
import time
import uuid

import pytest
import requests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --- storage backend -----------------------------------------------------------------------------
# TOUCHSYNC_TEST_DATABASE=postgres runs the servers these fixtures start on a fresh PostgreSQL
# database (`touchsync serve --database-url`) of the throw-away server in TOUCHSYNC_TEST_POSTGRES_URL
# (scripts/services.sh), dropped afterwards; without that server the tests skip with the reason.
def database_args(tmp, name="db.sqlite"):
    """The `serve` arguments choosing the database, and a cleanup callable."""
    if os.environ.get("TOUCHSYNC_TEST_DATABASE", "sqlite") != "postgres":
        return ["--database", os.path.join(tmp, name)], (lambda: None)
    server_url = os.environ.get("TOUCHSYNC_TEST_POSTGRES_URL")
    if not server_url:
        pytest.skip("PostgreSQL run skipped: TOUCHSYNC_TEST_POSTGRES_URL is not set (scripts/services.sh start DIR)"
                    + (": " + os.environ["TOUCHSYNC_TEST_SERVICES_SKIPPED"] if os.environ.get("TOUCHSYNC_TEST_SERVICES_SKIPPED") else ""))
    db = "ts_conf_" + uuid.uuid4().hex[:12]
    subprocess.run(["psql", server_url, "-qc", f"CREATE DATABASE {db}"], check=True, capture_output=True)
    url = server_url.rsplit("/", 1)[0] + "/" + db

    def drop():
        # Not awaited: the database is never used again, and the drop's catalog and file work runs
        # while the next test starts (the services' PostgreSQL goes at the end of the run anyway).
        subprocess.Popen(["psql", server_url, "-qc", f"DROP DATABASE IF EXISTS {db} WITH (FORCE)"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return ["--database-url", url], drop
# --- end storage backend ----------------------------------------------------------------------------


# The suite registers hundreds of accounts from 127.0.0.1 on one server, which is exactly what the
# per-address sign-up throttle refuses; it is turned off for the suite's servers and checked on
# servers of its own in test_write_limits.py.
SUITE_SIGN_UPS = {"TOUCHSYNC_LIMITS_SIGN_UPS_PER_HOUR": "0"}


class Server:
    def __init__(self, proc, base, log_lines):
        self.proc = proc
        self.base = base
        self.log_lines = log_lines

    def url(self, path):
        return self.base + path

    # --- REST helpers -----------------------------------------------------------------
    def register(self, prefix="user"):
        name = f"{prefix}_{uuid.uuid4().hex[:8]}"
        r = requests.post(self.url("/api/auth/register"), json={"username": name, "password": "password-123", "firstName": prefix})
        assert r.status_code == 201, r.text
        d = r.json()["data"]
        return {"id": d["user"]["id"], "username": name, "token": d["token"]}

    def auth(self, user, socket_id=None):
        h = {"Authorization": "Bearer " + user["token"]}
        if socket_id:
            h["X-Socket-Id"] = socket_id
        return h

    def room(self, owner, members=()):
        r = requests.post(self.url("/api/rooms"), json={"memberIds": [m["id"] for m in members]}, headers=self.auth(owner))
        assert r.status_code == 201, r.text
        return r.json()["data"]["id"]

    def element(self, user, room_id, socket_id=None, **extra):
        body = {"type": "note", "positionX": 1, "positionY": 2, "width": 100, "height": 50}
        body.update(extra)
        r = requests.post(self.url(f"/api/rooms/{room_id}/elements"), json=body, headers=self.auth(user, socket_id))
        assert r.status_code == 201, r.text
        return r.json()["data"]


def start_serve(args, env_overrides, scheme="http", port=0):
    """Starts `touchsync serve --port PORT ARGS` (TOUCHSYNC_BIN, or the debug build; port 0 picks a
    free one) with the process environment plus `env_overrides`, and waits up to 60 s for its
    "TouchSync … listening on" line.
    Returns (proc, base URL or None if it did not start, its output lines). Once started, a thread
    keeps appending the output to `lines`, so tests can wait for log lines."""
    binary = os.environ.get("TOUCHSYNC_BIN") or os.path.join(ROOT, ".build", "debug", "touchsync")
    env = dict(os.environ)
    env.update(env_overrides)
    proc = subprocess.Popen([binary, "serve", "--port", str(port)] + list(args),
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines, base = [], None
    deadline = time.time() + 60
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            if proc.poll() is not None:
                break
            continue
        lines.append(line)
        m = re.search(r"listening on (" + scheme + r"://127\.0\.0\.1:\d+)", line)
        if m and "TouchSync" in line:
            base = m.group(1)
            break
    if base:
        def pump():
            for l in proc.stdout:
                lines.append(l)
        threading.Thread(target=pump, daemon=True).start()
    return proc, base, lines


@pytest.fixture(scope="session")
def server():
    tmp = tempfile.mkdtemp(prefix="touchsync-conformance-")
    db_args, drop_db = database_args(tmp)
    proc, base, lines = start_serve(db_args, {
        "TOUCHSYNC_AUTH_PASSWORD_ITERATIONS": "1000",
        "TOUCHSYNC_JWT_SECRET": "conformance-secret-0123456789abcdef",
        "TOUCHSYNC_REALTIME_MAX_OUTBOUND_BYTES_PER_SOCKET": "262144",
        "TOUCHSYNC_LOG_LEVEL": "info",
        **SUITE_SIGN_UPS,
    })
    assert base, "server did not start:\n" + "".join(lines)
    yield Server(proc, base, lines)
    stop_serve(proc, drop_db)


def stop_serve(proc, drop_db):
    """SIGTERM, which must end the server with exit 0; then its database goes."""
    proc.terminate()
    try:
        assert proc.wait(timeout=15) == 0, "SIGTERM must end the server with exit 0"
    finally:
        if proc.poll() is None:
            proc.kill()
        drop_db()


# --- servers of their own settings ---------------------------------------------------------------
def start_own_server(env_overrides, args=()):
    """A `touchsync serve` like the shared `server` fixture (fresh database, cheap hashing, fixed secret) with
    `env_overrides` on top, for tests that need other settings. Stop it with stop_own_server."""
    tmp = tempfile.mkdtemp(prefix="touchsync-own-")
    db_args, drop_db = database_args(tmp)
    env = {"TOUCHSYNC_AUTH_PASSWORD_ITERATIONS": "1000", "TOUCHSYNC_JWT_SECRET": "conformance-secret-0123456789abcdef",
           "TOUCHSYNC_LOG_LEVEL": "info", **SUITE_SIGN_UPS}
    env.update(env_overrides)
    proc, base, lines = start_serve(list(args) + db_args, env)
    if not base:
        proc.kill()
        drop_db()
        raise AssertionError("server did not start:\n" + "".join(lines))
    server = Server(proc, base, lines)
    server.drop_db = drop_db
    return server


def stop_own_server(server):
    server.proc.terminate()
    try:
        server.proc.wait(timeout=15)
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
        server.drop_db()


def wait_for(predicate, timeout=10.0, interval=0.05):
    """Re-checks `predicate` until it holds or `timeout` seconds pass (then checks once more): the
    one bounded wait the suite uses where the server offers no event to wait on."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


# --- parallel runs (pytest-xdist) ------------------------------------------------------------------
def pytest_configure(config):
    # scripts/test runs the suite on pytest-xdist workers (`-n`, each worker its own session and so
    # its own `server`), except the tests marked `serial` (one at a time, in a phase of their own) and
    # `buildtree` (last, after the Swift tests) (docs/testing.md, "Parallel conformance").
    config.addinivalue_line("markers", "serial: never runs beside another test (a cluster, network namespaces, "
                                       "or a file/port other tests use); scripts/test runs these in their own phase")
    config.addinivalue_line("markers", "buildtree: uses the package's build directory (`swift build`/`swift run` there, "
                                       "or .build/debug.yaml); scripts/test runs these last, after every `swift test`")
