"""Engine.IO v3 / Socket.IO v4 protocol (realtime.allowEIO3) with a real client that speaks it:
python-socketio 4.6.1 + python-engineio 3.14.2, pinned in conformance/eio3/requirements.txt
and installed by scripts/test into .venv-eio3 (they cannot share .venv with python-socketio 5).
The client runs as a subprocess under that interpreter against a real `touchsync serve`.
"""
import json
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
EIO3_PYTHON = os.path.join(ROOT, ".venv-eio3", "bin", "python")
CLIENT = os.path.join(ROOT, "conformance", "eio3", "client_eio3.py")


@pytest.fixture(scope="module")
def eio3_server():
    binary = os.environ.get("TOUCHSYNC_BIN") or os.path.join(ROOT, ".build", "debug", "touchsync")
    tmp = tempfile.mkdtemp(prefix="touchsync-eio3-")
    env = dict(os.environ)
    env.update({
        "TOUCHSYNC_AUTH_PASSWORD_ITERATIONS": "1000",
        "TOUCHSYNC_JWT_SECRET": "conformance-secret-0123456789abcdef",
        "TOUCHSYNC_REALTIME_ALLOW_E_I_O3": "true",
        # Short heartbeat so a client that stays 3.5 s must have pinged (v3: the client pings every
        # interval; the server closes after interval + timeout without one). The 1.5 s of slack
        # beyond the interval keeps a client whose thread a loaded machine stalls for a moment
        # connected (400/400 left 400 ms and dropped the polling client mid-call under load).
        "TOUCHSYNC_REALTIME_PING_INTERVAL_MS": "1000",
        "TOUCHSYNC_REALTIME_PING_TIMEOUT_MS": "1500",
        "TOUCHSYNC_LOG_LEVEL": "info",
    })
    proc = subprocess.Popen([binary, "serve", "--port", "0", "--database", os.path.join(tmp, "db.sqlite")],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = None
    lines = []
    deadline = time.time() + 60
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            if proc.poll() is not None:
                break
            continue
        lines.append(line)
        m = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
        if m and "TouchSync" in line:
            base = m.group(1)
            break
    assert base, "server did not start:\n" + "".join(lines)
    threading.Thread(target=lambda: [lines.append(l) for l in proc.stdout], daemon=True).start()
    yield base
    proc.terminate()
    proc.wait(timeout=15)


def register(base, prefix):
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    r = requests.post(base + "/api/auth/register", json={"username": name, "password": "password-123", "firstName": prefix})
    assert r.status_code == 201, r.text
    d = r.json()["data"]
    return d["user"]["id"], d["token"]


def run_client(base, transports, stay=0.0):
    if not os.path.exists(EIO3_PYTHON):
        pytest.skip("no .venv-eio3 (python-socketio 4.x); scripts/test creates it from conformance/eio3/requirements.txt")
    a_id, a_token = register(base, "eio3a")
    b_id, b_token = register(base, "eio3b")
    r = requests.post(base + "/api/rooms", json={"memberIds": [b_id]}, headers={"Authorization": "Bearer " + a_token})
    assert r.status_code == 201, r.text
    room_id = r.json()["data"]["id"]
    p = subprocess.run([EIO3_PYTHON, CLIENT, base, a_token, b_token, room_id, transports, str(stay)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1]), room_id


@pytest.mark.parametrize("transports", ["polling", "websocket", "polling,websocket"])
def test_eio3_client_connects_with_query_auth_joins_creates_and_receives(eio3_server, transports):
    out, room_id = run_client(eio3_server, transports)
    assert out["engineio"].startswith("3.") and out["socketio"].startswith("4."), out
    assert out["connected"] == [True, True]
    assert out["join_a"]["roomId"] == room_id and out["join_b"]["roomId"] == room_id
    assert out["create_ack"]["element"]["content"] == "héllo ✓ 😀"
    assert out["broadcast_received"], out
    assert out["broadcast"]["element"]["id"] == out["create_ack"]["element"]["id"]


def test_eio3_client_pings_and_server_pongs_past_the_timeout(eio3_server):
    # pingInterval + pingTimeout = 2.5 s; staying 3.5 s needs the client's pings answered.
    out, _ = run_client(eio3_server, "polling,websocket", stay=3.5)
    assert out["still_connected"] == [True, True], out


def test_eio3_without_token_is_refused(eio3_server):
    # Socket.IO v4 protocol: the implicit `/` connect is refused with an ERROR packet `4"…"` (in an Engine.IO message `4`).
    r = requests.get(eio3_server + "/socket.io/?EIO=3&transport=polling")
    assert r.status_code == 200
    m = re.match(r"(\d+):0", r.text)
    assert m, r.text
    sid = json.loads(r.text[len(m.group(1)) + 2:])["sid"]
    r = requests.get(eio3_server + f"/socket.io/?EIO=3&transport=polling&sid={sid}")
    assert r.text == '16:44"unauthorized"', r.text  # message packet 4 carrying ERROR 4


def test_eio3_is_refused_when_allow_eio3_is_off(server):
    r = requests.get(server.url("/socket.io/?EIO=3&transport=polling"))
    assert r.status_code == 400
    assert r.json() == {"code": 5, "message": "Unsupported protocol version"}
