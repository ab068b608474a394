"""Engine.IO sessions that never send a Socket.IO CONNECT, against the real `touchsync serve`:
a client repeating handshakes holds at most `realtime.maxUnconnectedSessionsPerAddress` of them,
python-socketio (a client nobody here wrote) is refused past it with the reference's handshake
error body and says so in its `connect_error`, `/metrics` counts them, and once they expire at
`realtime.connectTimeout` the same client connects (docs/limits.md, "Before login")."""
import os
import shutil
import tempfile
import time

import requests
import socketio

from test_cli import start_collecting

CAP = 8


def metric(base, name):
    for line in requests.get(base + "/metrics", timeout=5).text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            yield line


def test_a_handshake_flood_is_capped_and_python_socketio_gets_the_reference_refusal_then_connects():
    # The flood and the refused client must fit inside one connect timeout, on a loaded machine too
    # (50 handshakes against a debug build); the wait for the expiry below is a wait, not work.
    env = {"TOUCHSYNC_REALTIME_MAX_UNCONNECTED_SESSIONS_PER_ADDRESS": str(CAP), "TOUCHSYNC_REALTIME_CONNECT_TIMEOUT": "10s"}
    tmp = tempfile.mkdtemp(prefix="touchsync-unconnected-")
    proc, base, lines = start_collecting(["--database", os.path.join(tmp, "db.sqlite")], env=env)
    try:
        reg = requests.post(base + "/api/auth/register", json={"username": "nat", "password": "password-123"})
        assert reg.status_code == 201, reg.text
        token = reg.json()["data"]["token"]

        # The flood: handshakes and nothing else.
        statuses = [requests.get(base + "/socket.io/?EIO=4&transport=polling", timeout=5).status_code for _ in range(50)]
        assert statuses.count(200) == CAP and statuses.count(403) == 50 - CAP, statuses
        assert f"touchsync_realtime_unconnected_sessions {CAP}" in list(metric(base, "touchsync_realtime_unconnected_sessions"))
        assert 'touchsync_realtime_handshakes_refused_total{reason="per_address"} %d' % (50 - CAP) in \
            list(metric(base, "touchsync_realtime_handshakes_refused_total"))

        errors = []
        sio = socketio.Client(reconnection=False)
        sio.on("connect_error", lambda data: errors.append(data))
        try:
            sio.connect(base, auth={"token": token}, wait_timeout=5)
            raise AssertionError("connected past the cap")
        except socketio.exceptions.ConnectionError as e:
            assert "403" in str(e), e
        assert errors and errors[0]["code"] == 4, errors
        assert "Too many sessions without a Socket.IO CONNECT from this address" in errors[0]["message"], errors

        # The flood's sessions expire at realtime.connectTimeout; the client gets in.
        deadline = time.time() + 40
        while time.time() < deadline and "touchsync_realtime_unconnected_sessions 0" not in list(metric(base, "touchsync_realtime_unconnected_sessions")):
            time.sleep(0.1)
        assert f"touchsync_realtime_connect_timeouts_total {CAP}" in list(metric(base, "touchsync_realtime_connect_timeouts_total"))
        sio = socketio.Client(reconnection=False)
        sio.connect(base, auth={"token": token}, wait_timeout=5)
        try:
            assert sio.connected
            assert "touchsync_realtime_unconnected_sessions 0" in list(metric(base, "touchsync_realtime_unconnected_sessions")), \
                "a connected client is no longer counted"
        finally:
            sio.disconnect()
        refusal_lines = [l for l in lines if "Engine.IO handshakes refused" in l]
        assert 1 <= len(refusal_lines) <= 2, "".join(refusal_lines)
        assert "realtime.maxUnconnectedSessionsPerAddress" in refusal_lines[0], refusal_lines[0]
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        shutil.rmtree(tmp, ignore_errors=True)
