"""Cross-node fan-out over Redis (docs/realtime-cluster.md) with the real python-socketio client: two
`touchsync serve --redis-url …` processes sharing one SQLite file and one Redis. An element
created through node A's REST reaches python-socketio clients on node B, each with its own
`hasReacted`; the originating socket (X-Socket-Id) is skipped across nodes.

Needs TOUCHSYNC_TEST_REDIS_URL (scripts/services.sh exports it; scripts/test runs it); without it
the tests skip with the reason. The full 3-node + nginx test is conformance/test_cluster.py."""
import os
import re
import subprocess
import tempfile
import threading
import time
import uuid

import pytest
import requests
import socketio

from conftest import start_serve

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REDIS_URL = os.environ.get("TOUCHSYNC_TEST_REDIS_URL")
pytestmark = pytest.mark.skipif(not REDIS_URL, reason="TOUCHSYNC_TEST_REDIS_URL is not set (scripts/services.sh starts a Redis; "
                                + os.environ.get("TOUCHSYNC_TEST_SERVICES_SKIPPED", "") + ")")


def start_node(db, prefix):
    proc, base, lines = start_serve(["--database", db, "--redis-url", REDIS_URL], {
        "TOUCHSYNC_AUTH_PASSWORD_ITERATIONS": "1000", "TOUCHSYNC_JWT_SECRET": "redis-fanout-secret-0123456789abcdef",
        "TOUCHSYNC_LOG_LEVEL": "info", "TOUCHSYNC_REALTIME_REDIS_CHANNEL_PREFIX": prefix})
    assert base, "node did not start:\n" + "".join(lines)
    return proc, base, lines


@pytest.fixture(scope="module")
def nodes():
    tmp = tempfile.mkdtemp(prefix="touchsync-redis-fanout-")
    db = os.path.join(tmp, "cluster.sqlite")
    prefix = "conformance-" + uuid.uuid4().hex[:8]
    started = [start_node(db, prefix)]  # the first one migrates the shared file
    started.append(start_node(db, prefix))
    bases = [b for (_, b, _) in started]
    for b in bases:
        deadline = time.time() + 15
        while requests.get(b + "/health").json().get("redis") != "ok":
            assert time.time() < deadline, f"{b} never connected to Redis: " + requests.get(b + "/health").text
            time.sleep(0.05)
    yield bases
    for (proc, _, _) in started:
        proc.terminate()
    for (proc, base, lines) in started:
        try:
            assert proc.wait(timeout=15) == 0, f"{base}: SIGTERM must end the node with exit 0"
        finally:
            if proc.poll() is None:
                proc.kill()


def register(base, prefix):
    r = requests.post(base + "/api/auth/register", json={"username": f"{prefix}_{uuid.uuid4().hex[:8]}", "password": "password-123"})
    assert r.status_code == 201, r.text
    d = r.json()["data"]
    return {"id": d["user"]["id"], "token": d["token"]}


class Client:
    """python-socketio with its defaults (long-polling, then WebSocket), recording every event."""

    def __init__(self, base, user):
        self.sio = socketio.Client(reconnection=False)
        self.events, self.lock = [], threading.Lock()

        @self.sio.on("*")
        def any_event(event, *args):
            with self.lock:
                self.events.append((event, args[0] if args else None))

        self.sio.connect(base, auth={"token": user["token"]}, wait_timeout=10)

    def join(self, room_id):
        ack = self.sio.call("room:join", {"roomId": room_id}, timeout=10)
        assert "error" not in ack, ack

    def wait_for(self, name, pred=lambda p: True, timeout=10.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                got = [p for (e, p) in self.events if e == name and pred(p)]
            if got:
                return got
            time.sleep(0.02)
        return []

    def of(self, name):
        with self.lock:
            return [p for (e, p) in self.events if e == name]


def test_element_from_node_a_reaches_python_socketio_clients_on_node_b_with_their_own_has_reacted(nodes):
    a, b = nodes
    alice, bob = register(a, "alice"), register(a, "bob")
    r = requests.post(a + "/api/rooms", json={"memberIds": [bob["id"]]}, headers={"Authorization": "Bearer " + alice["token"]})
    assert r.status_code == 201, r.text
    room = r.json()["data"]["id"]
    bob_b, alice_b, origin_b = Client(b, bob), Client(b, alice), Client(b, alice)
    try:
        for c in (bob_b, alice_b, origin_b):
            c.join(room)
        h = {"Authorization": "Bearer " + alice["token"], "X-Socket-Id": origin_b.sio.get_sid()}
        r = requests.post(f"{a}/api/rooms/{room}/elements", json={"type": "note", "content": "via A", "positionX": 1, "positionY": 2,
                                                                  "width": 100, "height": 50}, headers=h)
        assert r.status_code == 201, r.text
        eid = r.json()["data"]["id"]
        for c in (bob_b, alice_b):
            got = c.wait_for("element:created", lambda p: p["element"]["id"] == eid)
            assert len(got) == 1 and got[0]["element"]["content"] == "via A"

        r = requests.post(f"{a}/api/rooms/{room}/elements/{eid}/reactions/toggle", headers={"Authorization": "Bearer " + alice["token"]})
        assert r.status_code == 200, r.text
        for_bob = bob_b.wait_for("element:reaction:added", lambda p: p["elementId"] == eid)
        for_alice = alice_b.wait_for("element:reaction:added", lambda p: p["elementId"] == eid)
        assert for_bob and for_bob[0]["stats"]["hasReacted"] is False
        assert for_alice and for_alice[0]["stats"]["hasReacted"] is True

        # The origin socket: everything after the create reached it (the reaction), the create never did.
        assert origin_b.wait_for("element:reaction:added", lambda p: p["elementId"] == eid)
        assert [p for p in origin_b.of("element:created") if p["element"]["id"] == eid] == []
    finally:
        for c in (bob_b, alice_b, origin_b):
            c.sio.disconnect()
