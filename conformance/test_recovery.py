"""Connection state recovery (realtime.connectionStateRecovery.maxDisconnectionDuration) on the
real `touchsync serve`, with a raw WebSocket client sending what socket.io-client >= 4.6 sends:
on reconnect, CONNECT with its auth plus the `pid` from the first CONNECT reply and the last
`offset` it saw (the last argument of the last event). Room events caused over REST while it
was away come back in order; after a restart it starts fresh.
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

from recoverylib import RawSocket

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class RecoveringServer:
    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="touchsync-recovery-")
        self.proc = None
        self.base = None

    def start(self):
        binary = os.environ.get("TOUCHSYNC_BIN") or os.path.join(ROOT, ".build", "debug", "touchsync")
        env = dict(os.environ)
        env.update({
            "TOUCHSYNC_AUTH_PASSWORD_ITERATIONS": "1000",
            "TOUCHSYNC_JWT_SECRET": "conformance-secret-0123456789abcdef",
            "TOUCHSYNC_REALTIME_CONNECTION_STATE_RECOVERY_MAX_DISCONNECTION_DURATION": "10000",
            "TOUCHSYNC_LOG_LEVEL": "info",
        })
        self.proc = subprocess.Popen([binary, "serve", "--port", "0", "--database", os.path.join(self.tmp, "db.sqlite")],
                                     cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = []
        deadline = time.time() + 60
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                if self.proc.poll() is not None:
                    break
                continue
            lines.append(line)
            m = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
            if m and "TouchSync" in line:
                self.base = m.group(1)
                break
        assert self.base, "server did not start:\n" + "".join(lines)
        self.lines = lines
        threading.Thread(target=lambda: [lines.append(l) for l in self.proc.stdout], daemon=True).start()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=15)

    def disconnects(self):
        return sum(1 for l in self.lines if "socket disconnected" in l)


@pytest.fixture
def rserver():
    s = RecoveringServer()
    s.start()
    yield s
    if s.proc.poll() is None:
        s.stop()


def register(base, prefix):
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    r = requests.post(base + "/api/auth/register", json={"username": name, "password": "password-123", "firstName": prefix})
    assert r.status_code == 201, r.text
    d = r.json()["data"]
    return d["user"]["id"], d["token"]


def create_element(base, token, room_id, content):
    r = requests.post(base + f"/api/rooms/{room_id}/elements", headers={"Authorization": "Bearer " + token},
                      json={"type": "note", "positionX": 1, "positionY": 2, "width": 100, "height": 50, "content": content})
    assert r.status_code == 201, r.text
    return r.json()["data"]["id"]


def wait_for_disconnects(server, n, timeout=5):
    deadline = time.time() + timeout
    while server.disconnects() < n and time.time() < deadline:
        time.sleep(0.02)
    assert server.disconnects() >= n, "the server never saw the drop"


def test_missed_room_events_come_back_in_order_with_the_same_sid(rserver):
    base = rserver.base
    _, token = register(base, "rec")
    r = requests.post(base + "/api/rooms", json={"memberIds": []}, headers={"Authorization": "Bearer " + token})
    room_id = r.json()["data"]["id"]

    s = RawSocket(base, {"token": token})
    sid, pid = s.handshake["sid"], s.handshake.get("pid")
    assert pid, s.handshake
    s.ws.send('420["room:join",{"roomId":"%s"}]' % room_id)
    batch = s.event()
    assert batch[0] == "elements:batch" and isinstance(batch[-1], str), batch  # the offset is the last argument
    assert s.next().startswith("430")
    e1 = create_element(base, token, room_id, "one")
    got = [s.event(), s.event()]  # element:created and element:created:global, each with an offset
    assert sorted(g[0] for g in got) == ["element:created", "element:created:global"]
    last_offset = got[-1][-1]

    s.ws.shutdown()  # the network drops: no Engine.IO or WebSocket close
    wait_for_disconnects(rserver, 1)
    e2 = create_element(base, token, room_id, "two")
    e3 = create_element(base, token, room_id, "three")

    back = RawSocket(base, {"token": token, "pid": pid, "offset": last_offset})
    assert back.handshake == {"sid": sid, "pid": pid}
    missed = [back.event() for _ in range(4)]
    created = [m[1]["element"]["id"] for m in missed if m[0] == "element:created"]
    assert created == [e2, e3], missed
    assert e1 not in [m[1].get("elementId") for m in missed]
    # Its room membership is back: the next room event reaches it without a new room:join.
    e4 = create_element(base, token, room_id, "four")
    after = [back.event(), back.event()]
    assert e4 in [a[1].get("element", {}).get("id") for a in after]


def test_after_a_restart_the_client_starts_fresh(rserver):
    base = rserver.base
    _, token = register(base, "rst")
    s = RawSocket(base, {"token": token})
    sid, pid = s.handshake["sid"], s.handshake["pid"]
    s.ws.shutdown()
    rserver.stop()
    rserver.start()  # same database, new process: nothing of the old session survives
    back = RawSocket(rserver.base, {"token": token, "pid": pid, "offset": "anything-1"})
    assert back.handshake["sid"] != sid and back.handshake["pid"] != pid
