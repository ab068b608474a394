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
import re
import threading
import time

import pytest
import requests
import websocket

from clusterlib import Cluster
from recoverylib import RawSocket
from test_recovery import create_element, register

# Never beside another test (scripts/test runs the `serial` ones in their own phase): three nodes on the
# shared PostgreSQL and Redis: one cluster at a time (docs/testing.md, "Parallel conformance").
pytestmark = pytest.mark.serial

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


def create_room(base, token, members):
    r = requests.post(base + "/api/rooms", json={"memberIds": members}, headers={"Authorization": "Bearer " + token})
    assert r.status_code == 201, r.text
    return r.json()["data"]["id"]


class Reader:
    """Collects (room, element id) of element:created and of element:created:global, in arrival
    order, until the socket fails or `stop`."""

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
                self.created.append((e[1]["element"]["roomId"], e[1]["element"]["id"]))
            elif e[0] == "element:created:global":
                self.globals.append((e[1]["roomId"], e[1]["elementId"]))

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


def replayed(node, sid):
    """What the node's log says it replayed when it recovered `sid` (None when it did not)."""
    with open(node.log_path, errors="replace") as f:
        for line in f:
            m = re.search(r"recovered socket " + re.escape(sid) + r" .*; (\d+) missed events replayed", line)
            if m:
                return int(m.group(1))
    return None


def per_room(pairs, room):
    return [e for r, e in pairs if r == room]


def one_round(c, k):
    """A client in two rooms on node 1; writers alternate rooms and nodes 2 and 3; node 1 is
    killed after a random number of events; the client reconnects with its pid and offset."""
    node1, node2, node3 = c.nodes
    if node1.proc.poll() is not None:
        c.start_node(node1)
    client_id, client_token = register(node2.base, f"rc{k}")
    _, writer_token = register(node3.base, f"rw{k}")
    rooms = [create_room(node3.base, writer_token, [client_id]) for _ in range(2)]
    before_join = [create_element(node2.base, writer_token, rooms[0], "early")]

    sock = RawSocket(node1.base, {"token": client_token})
    sid, pid = sock.handshake["sid"], sock.handshake.get("pid")
    assert pid, sock.handshake
    assert [e["id"] for e in sock.join(rooms[0])[1]["elements"]] == before_join
    assert sock.join(rooms[1])[1]["elements"] == []
    reader = Reader(sock)

    sent = []
    total = 60
    kill_at = random.randint(10, 40)

    def write():
        for i in range(total):
            room = rooms[i % 2]
            sent.append((room, create_element((node2, node3)[(i // 2) % 2].base, writer_token, room, f"e{i}")))

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    assert wait(lambda: len(reader.created) >= kill_at, 30), f"the client got {len(reader.created)} events before the kill\n" + c.logs()
    c.kill_node(node1)
    # As a real client: it handles every frame that reached it, until the connection is gone.
    reader.thread.join(timeout=10)
    assert not reader.thread.is_alive(), "the client did not see its node go"
    reader.stop()
    before, before_globals = list(reader.created), list(reader.globals)
    # Away while the writers go on: about ten events to replay (a bounded wait on their progress).
    wait(lambda: len(sent) >= len(before) + 10, 10)

    # Alternately to node 2 and node 3 (through the relay to Redis, so often behind node 1).
    target = (node2, node3)[k % 2]
    back = RawSocket(target.base, {"token": client_token, "pid": pid, "offset": sock.offset})
    recovered = back.handshake == {"sid": sid, "pid": pid}
    after = Reader(back)
    writer.join(timeout=60)
    assert len(sent) == total, "the writers did not finish"
    wait(lambda: len(before) + len(after.created) >= total and len(before_globals) + len(after.globals) >= total, 15)
    after.stop()
    got, got_globals = before + after.created, before_globals + after.globals
    ids = [e for _, e in got]
    print(f"round {k}: sent {total}, before the kill {len(before)}, after {len(after.created)} "
          f"(replayed {replayed(target, sid)}), duplicated {len(ids) - len(set(ids))}, "
          f"lost {len({e for _, e in sent} - set(ids))}, globals {len(got_globals)}, recovered {recovered}")
    return recovered, rooms, sent, got, got_globals


def test_a_client_of_a_killed_node_recovers_on_another_with_every_missed_event_once_in_order(cluster):
    for k in range(ROUNDS):
        recovered, rooms, sent, got, got_globals = one_round(cluster, k)
        assert recovered, f"round {k}: the session was not recovered\n" + cluster.logs()
        for room in rooms:
            want = per_room(sent, room)
            assert per_room(got, room) == want, f"round {k}: in room {room} the client got {per_room(got, room)}\nexpected {want}\n" + cluster.logs()
            assert per_room(got_globals, room) == want, f"round {k}: global events of room {room}: {per_room(got_globals, room)}\nexpected {want}"
        assert len(got) == len(sent) and len(got_globals) == len(sent)


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


def test_replayed_events_are_personalised_for_the_recovered_client(cluster):
    """A heart another member gave while the client was away comes back with the client's own
    view (`hasReacted` false), not the reactor's."""
    node1, node2, node3 = cluster.nodes
    if node1.proc.poll() is not None:
        cluster.start_node(node1)
    client_id, client_token = register(node2.base, "viewer")
    _, reactor = register(node2.base, "reactor")
    room = create_room(node2.base, reactor, [client_id])
    element = create_element(node2.base, reactor, room, "heart me")
    s = RawSocket(node1.base, {"token": client_token})
    sid, pid = s.handshake["sid"], s.handshake["pid"]
    s.join(room)
    create_element(node2.base, reactor, room, "seen")
    assert wait(lambda: s.event()[0] == "element:created", 10)
    s.event()  # its global
    offset = s.offset
    cluster.kill_node(node1)
    r = requests.post(node3.base + f"/api/rooms/{room}/elements/{element}/reactions/toggle",
                      headers={"Authorization": "Bearer " + reactor}, timeout=10)
    assert r.status_code == 200, r.text
    back = RawSocket(node2.base, {"token": client_token, "pid": pid, "offset": offset})
    assert back.handshake == {"sid": sid, "pid": pid}
    e = back.event()
    assert e[0] == "element:reaction:added", e
    assert e[1]["elementId"] == element and e[1]["stats"]["totalReactions"] == 1
    assert e[1]["stats"]["hasReacted"] is False, e
    cluster.start_node(node1)
