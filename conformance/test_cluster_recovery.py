"""Connection state recovery across nodes (docs/realtime-cluster.md, "Connection state recovery
across nodes"): three `touchsync serve` nodes on PostgreSQL + Redis with
realtime.connectionStateRecovery on. A client speaks what socket.io-client >= 4.6 sends (a raw
WebSocket client, as conformance/test_recovery.py: python-socketio keeps no `pid`/`offset`): its
node is killed with SIGKILL while writers create elements through the other nodes; it reconnects
to another node with its `pid` and last `offset`, gets its session back (same sid, its rooms) and
the room events it missed, so that what it got before, what was replayed and what came after hold
every element exactly once, in the room's commit order. Recovery that cannot be exact (an offset
of no node, another user's session) gives a fresh session.

TOUCHSYNC_RECOVERY_ROUNDS (default 3) sets how many kills one run makes.
"""
import os
import random
import threading
import time
import uuid

import pytest
import requests
import websocket

from clusterlib import Cluster
from recoverylib import RawSocket

ROUNDS = int(os.environ.get("TOUCHSYNC_RECOVERY_ROUNDS", "3"))
WINDOW_MS = 60000


class RecoveryCluster(Cluster):
    def node_env(self):
        env = super().node_env()
        env["TOUCHSYNC_REALTIME_CONNECTION_STATE_RECOVERY_MAX_DISCONNECTION_DURATION"] = str(WINDOW_MS)
        return env


@pytest.fixture(scope="module")
def cluster():
    c = RecoveryCluster()
    reason = c.missing()
    if reason:
        pytest.skip(f"recovery across nodes: {reason}")
    if c.storage_note:
        pytest.skip(f"recovery across nodes needs PostgreSQL: {c.storage_note}")
    try:
        c.start()
    except BaseException:
        c.stop()
        raise
    yield c
    c.stop()


def register(base, prefix):
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    r = requests.post(base + "/api/auth/register", json={"username": name, "password": "password-123", "firstName": prefix})
    assert r.status_code == 201, r.text
    d = r.json()["data"]
    return d["user"]["id"], d["token"]


def create_room(base, token, members):
    r = requests.post(base + "/api/rooms", json={"memberIds": members}, headers={"Authorization": "Bearer " + token})
    assert r.status_code == 201, r.text
    return r.json()["data"]["id"]


def create_element(base, token, room_id, content):
    r = requests.post(base + f"/api/rooms/{room_id}/elements", headers={"Authorization": "Bearer " + token},
                      json={"type": "note", "positionX": 1, "positionY": 2, "width": 100, "height": 50, "content": content},
                      timeout=10)
    assert r.status_code == 201, r.text
    return r.json()["data"]["id"]


class Reader:
    """Collects element:created ids and element:created:global ids until the socket fails or `stop`."""

    def __init__(self, sock):
        self.sock = sock
        self.created = []
        self.globals = []
        self.stopped = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        self.sock.ws.settimeout(0.5)
        while not self.stopped:
            try:
                e = self.sock.event()
            except websocket.WebSocketTimeoutException:
                continue
            except Exception:
                return
            if e[0] == "element:created":
                self.created.append(e[1]["element"]["id"])
            elif e[0] == "element:created:global":
                self.globals.append(e[1]["elementId"])

    def stop(self):
        self.stopped = True
        self.thread.join(timeout=5)


def wait(condition, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def one_round(c, k):
    node1, node2, node3 = c.nodes
    if node1.proc.poll() is not None:
        c.start_node(node1)
    client_id, client_token = register(node2.base, f"rc{k}")
    _, writer_token = register(node3.base, f"rw{k}")
    room = create_room(node3.base, writer_token, [client_id])
    before_join = [create_element(node2.base, writer_token, room, "early")]

    sock = RawSocket(node1.base, {"token": client_token})
    sid, pid = sock.handshake["sid"], sock.handshake.get("pid")
    assert pid, sock.handshake
    batch = sock.join(room)
    assert [e["id"] for e in batch[1]["elements"]] == before_join
    reader = Reader(sock)

    sent = []
    total = 60
    kill_at = random.randint(10, 40)

    def write():
        for i in range(total):
            sent.append(create_element((node2, node3)[i % 2].base, writer_token, room, f"e{i}"))

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    assert wait(lambda: len(reader.created) >= kill_at, 30), f"the client got {len(reader.created)} events before the kill\n" + c.logs()
    c.kill_node(node1)
    # As a real client: it handles every frame that reached it, until the connection is gone.
    reader.thread.join(timeout=10)
    assert not reader.thread.is_alive(), "the client did not see its node go"
    reader.stop()
    before = list(reader.created)
    before_globals = list(reader.globals)
    offset = sock.offset

    # Alternately to node 2 and node 3 (through the relay to Redis, so often behind node 1).
    back = RawSocket((node2, node3)[k % 2].base, {"token": client_token, "pid": pid, "offset": offset})
    recovered = back.handshake == {"sid": sid, "pid": pid}
    after_reader = Reader(back)
    writer.join(timeout=60)
    assert len(sent) == total, "the writers did not finish"
    wait(lambda: len(before) + len(after_reader.created) >= total and len(before_globals) + len(after_reader.globals) >= total, 15)
    after_reader.stop()
    got = before + after_reader.created
    got_globals = before_globals + after_reader.globals
    dupes = len(got) - len(set(got))
    lost = len(set(sent) - set(got))
    print(f"round {k}: sent {total}, before the kill {len(before)}, after {len(after_reader.created)}, "
          f"duplicated {dupes}, lost {lost}, globals {len(got_globals)}, recovered {recovered}")
    return recovered, sent, got, got_globals, c


def test_a_client_of_a_killed_node_recovers_on_another_with_every_missed_event_once_in_order(cluster, capsys):
    for k in range(ROUNDS):
        recovered, sent, got, got_globals, c = one_round(cluster, k)
        assert recovered, f"round {k}: the session was not recovered\n" + c.logs()
        assert got == sent, f"round {k}: the client got {got}\nexpected {sent}\n" + c.logs()
        assert got_globals == sent, f"round {k}: global events {got_globals}\nexpected {sent}"


def test_an_offset_of_no_node_gets_a_fresh_session(cluster):
    node1, node2, _ = cluster.nodes
    if node1.proc.poll() is not None:
        cluster.start_node(node1)
    _, token = register(node2.base, "stale")
    s = RawSocket(node1.base, {"token": token})
    sid, pid = s.handshake["sid"], s.handshake["pid"]
    s.ws.shutdown()
    back = RawSocket(node2.base, {"token": token, "pid": pid, "offset": "NoSuchNode-5"})
    assert back.handshake["sid"] != sid and back.handshake["pid"] != pid


def test_another_users_pid_gets_a_fresh_session_and_the_owner_still_recovers(cluster):
    node1, node2, node3 = cluster.nodes
    if node1.proc.poll() is not None:
        cluster.start_node(node1)
    owner_id, owner = register(node2.base, "owner")
    _, other = register(node2.base, "other")
    room = create_room(node2.base, owner, [])
    s = RawSocket(node1.base, {"token": owner})
    sid, pid = s.handshake["sid"], s.handshake["pid"]
    s.join(room)
    create_element(node2.base, owner, room, "seen")
    assert wait(lambda: s.event()[0] in ("element:created", "element:created:global") and s.offset, 10)
    s.event()  # its pair
    offset = s.offset
    cluster.kill_node(node1)
    missed = create_element(node3.base, owner, room, "missed")
    thief = RawSocket(node2.base, {"token": other, "pid": pid, "offset": offset})
    assert thief.handshake["sid"] != sid
    back = RawSocket(node3.base, {"token": owner, "pid": pid, "offset": offset})
    assert back.handshake == {"sid": sid, "pid": pid}
    replay = [back.event(), back.event()]
    assert missed in [e[1].get("element", {}).get("id") or e[1].get("elementId") for e in replay], f"{replay}\n" + cluster.logs()
    cluster.start_node(node1)
