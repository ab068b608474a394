"""The `touchsync` binary as an operator uses it: version, migrate, token, refusals with a
clear message, and durability of answered writes across `kill -9`."""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import requests

from conftest import ROOT

BIN = os.environ.get("TOUCHSYNC_BIN") or os.path.join(ROOT, ".build", "debug", "touchsync")
BASE_ENV = {"TOUCHSYNC_AUTH_PASSWORD_ITERATIONS": "1000", "TOUCHSYNC_JWT_SECRET": "cli-test-secret-0123456789abcdef"}


def run(*args, env=None, timeout=60):
    e = dict(os.environ)
    e.update(BASE_ENV)
    e.update(env or {})
    return subprocess.run([BIN, *args], cwd=ROOT, env=e, capture_output=True, text=True, timeout=timeout)


def start(db, env=None):
    e = dict(os.environ)
    e.update(BASE_ENV)
    e.update(env or {})
    proc = subprocess.Popen([BIN, "serve", "--port", "0", "--database", db], cwd=ROOT, env=e,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 60
    out = []
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        out.append(line)
        m = re.search(r"TouchSync .* listening on (http://127\.0\.0\.1:\d+)", line)
        if m:
            return proc, m.group(1)
    proc.kill()
    raise AssertionError("server did not start:\n" + "".join(out))


def test_version():
    r = run("version")
    assert r.returncode == 0 and re.match(r"touchsync \d+\.\d+\.\d+", r.stdout)


def test_migrate_token_and_checksum_refusal():
    tmp = tempfile.mkdtemp()
    migrations = os.path.join(tmp, "Migrations")
    shutil.copytree(os.path.join(ROOT, "Migrations"), migrations)
    db = os.path.join(tmp, "db.sqlite")
    env = {"TOUCHSYNC_MIGRATIONS_DIR": migrations}
    r = run("migrate", "--database", db, env=env)
    assert r.returncode == 0, r.stderr
    # A user, then a token for them from the CLI that the server accepts.
    proc, base = start(db, env)
    try:
        reg = requests.post(base + "/api/auth/register", json={"username": "cliuser", "password": "password-123"})
        assert reg.status_code == 201
    finally:
        proc.terminate()
        assert proc.wait(timeout=15) == 0
    tok = run("token", "cliuser", "--expires", "1h", "--database", db, env=env)
    assert tok.returncode == 0, tok.stderr
    token = tok.stdout.strip().splitlines()[-1]
    proc, base = start(db, env)
    try:
        me = requests.get(base + "/api/auth/me", headers={"Authorization": "Bearer " + token})
        assert me.status_code == 200 and me.json()["data"]["username"] == "cliuser"
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    missing = run("token", "nobody", "--database", db, env=env)
    assert "no user named nobody" in (missing.stdout + missing.stderr)

    # Editing an applied migration stops the start with a message naming the file.
    first = sorted(f for f in os.listdir(migrations) if f.endswith(".sql"))[0]
    with open(os.path.join(migrations, first), "a") as f:
        f.write("\n-- edited after it was applied\n")
    r = run("serve", "--port", "0", "--database", db, env=env, timeout=30)
    assert r.returncode != 0
    assert first in (r.stdout + r.stderr), r.stdout + r.stderr


def test_production_without_secret_refuses_to_start():
    tmp = tempfile.mkdtemp()
    e = dict(os.environ)
    e.pop("TOUCHSYNC_JWT_SECRET", None)
    e["TOUCHSYNC_ENV"] = "production"
    r = subprocess.run([BIN, "serve", "--port", "0", "--database", os.path.join(tmp, "db.sqlite")], cwd=ROOT, env=e,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0
    assert "TOUCHSYNC_JWT_SECRET" in (r.stdout + r.stderr)


def test_answered_writes_survive_kill_9():
    tmp = tempfile.mkdtemp()
    db = os.path.join(tmp, "db.sqlite")
    proc, base = start(db)
    answered = []
    try:
        reg = requests.post(base + "/api/auth/register", json={"username": "durable", "password": "password-123"}).json()["data"]
        h = {"Authorization": "Bearer " + reg["token"]}
        room = requests.post(base + "/api/rooms", json={}, headers=h).json()["data"]["id"]
        for i in range(60):
            r = requests.post(base + f"/api/rooms/{room}/elements", headers=h,
                              json={"type": "note", "positionX": i, "positionY": 0, "width": 1, "height": 1})
            assert r.status_code == 201
            answered.append(r.json()["data"]["id"])
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=15)
    proc, base = start(db)
    try:
        login = requests.post(base + "/api/auth/login", json={"username": "durable", "password": "password-123"})
        assert login.status_code == 200
        h = {"Authorization": "Bearer " + login.json()["data"]["token"]}
        elements = requests.get(base + f"/api/rooms/{room}/elements", headers=h).json()["data"]
        assert [e["id"] for e in elements] == answered
        rooms = requests.get(base + "/api/rooms/my-rooms", headers=h).json()["data"]
        assert rooms[0]["elementCount"] == len(answered)
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def test_websocket_origin_allow_list():
    """`realtime.allowedOrigins` refuses a browser WebSocket from another origin (403); CORS on polling
    follows `realtime.corsAllowedOrigins`."""
    import websocket
    tmp = tempfile.mkdtemp()
    proc, base = start(os.path.join(tmp, "db.sqlite"), {"TOUCHSYNC_REALTIME_ALLOWED_ORIGINS": "https://good.example",
                                                         "TOUCHSYNC_REALTIME_CORS_ALLOWED_ORIGINS": "https://good.example"})
    try:
        url = base.replace("http", "ws") + "/socket.io/?EIO=4&transport=websocket"
        ok = websocket.create_connection(url, origin="https://good.example", timeout=5)
        assert ok.recv().startswith("0{")
        ok.close()
        native = websocket.create_connection(url, suppress_origin=True, timeout=5)
        assert native.recv().startswith("0{"), "a native client sends no Origin and is allowed"
        native.close()
        try:
            websocket.create_connection(url, origin="https://evil.example", timeout=5)
            assert False, "a foreign origin must be refused"
        except websocket.WebSocketBadStatusException as e:
            assert e.status_code == 403
        r = requests.get(base + "/socket.io/?EIO=4&transport=polling", headers={"Origin": "https://good.example"})
        assert r.headers.get("Access-Control-Allow-Origin") == "https://good.example"
        r = requests.get(base + "/socket.io/?EIO=4&transport=polling", headers={"Origin": "https://evil.example"})
        assert "Access-Control-Allow-Origin" not in r.headers
    finally:
        proc.terminate()
        proc.wait(timeout=15)
