"""One order for a room's events, the commit order (docs/realtime.md "Order" and "Joining"), seen
by real python-socketio clients over WebSocket and over HTTP long-polling:

- concurrent heart toggles: the last reaction stats each watching client received equal the
  server's count, every round;
- `room:join` while three writers create elements: the batch and the `element:created` events
  after it hold every element exactly once;
- MyRooms counts kept from the global events (+1 created, -1 deleted, 0 cleared) end equal to
  `GET /api/rooms/my-rooms` while members create, delete and clear at once.

Sizes are scaled for CI; the environment variables below run the full sizes locally
(ORDER_TOGGLE_ROUNDS=100 ORDER_TOGGLES_PER_ROUND=100 ORDER_JOINS=200)."""
import collections
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import engineio
import engineio.payload
import pytest
import requests
import socketio

from conftest import start_own_server, stop_own_server, wait_for

TOGGLE_ROUNDS = int(os.environ.get("ORDER_TOGGLE_ROUNDS", "20"))
TOGGLES_PER_ROUND = int(os.environ.get("ORDER_TOGGLES_PER_ROUND", "48"))
JOINS = int(os.environ.get("ORDER_JOINS", "48"))
ORDER_MYROOMS_WRITES = int(os.environ.get("ORDER_MYROOMS_WRITES", "48"))
MEMBERS = 16
# python-engineio's client refuses a polling payload of more than 16 packets (a limit of its own:
# the reference server, like ours, answers a poll with every packet queued since the last one).
# Sixteen members toggling at once queue more than that between two polls.
engineio.payload.Payload.max_decode_packets = 4096



class InOrderEngineIOClient(engineio.Client):
    """python-engineio hands every received message to a thread of its own (`_trigger_event(...,
    run_async=True)`), so two events that arrived in order can reach the handlers in either order.
    What is tested here is the order on the wire: messages are handled on the read loop, as they
    arrive (acks too, which `call` waits for on another thread)."""

    def _trigger_event(self, event, *args, **kwargs):
        if event == "message":
            kwargs["run_async"] = False
        return super()._trigger_event(event, *args, **kwargs)


class InOrderClient(socketio.Client):
    def _engineio_client_class(self):
        return InOrderEngineIOClient


TRANSPORTS = [pytest.param(["websocket"], id="websocket"), pytest.param(["polling"], id="polling")]


@pytest.fixture(scope="module")
def oserver():
    # Write limits off: the test itself makes hundreds of writes per user in seconds.
    s = start_own_server({"TOUCHSYNC_LIMITS_ENABLED": "false"})
    yield s
    stop_own_server(s)


class Watcher:
    """A python-socketio client (default settings but the transport; events recorded in arrival order)."""

    def __init__(self, server, user, transports):
        self.client = InOrderClient(reconnection=False)
        self.events = []
        self.lock = threading.Lock()

        @self.client.on("*")
        def catch_all(event, *args):
            with self.lock:
                self.events.append((event, args[0] if args else None))

        self.client.connect(server.base, auth={"token": user["token"]}, transports=transports, wait_timeout=10)

    def of(self, *names):
        with self.lock:
            return [(e, p) for (e, p) in self.events if e in names]

    def join(self, room_id):
        ack = self.client.call("room:join", {"roomId": room_id}, timeout=10)
        assert "error" not in ack, ack
        return ack

    def close(self):
        try:
            self.client.disconnect()
        except Exception:
            pass


def wait_until(predicate, timeout=20.0):
    return wait_for(predicate, timeout)


def members_room(server, n):
    users = [server.register("order") for _ in range(n)]
    return users, server.room(users[0], users[1:])


@pytest.mark.parametrize("transports", TRANSPORTS)
def test_the_last_reaction_stats_every_watcher_gets_equal_the_servers_count(oserver, transports):
    users, room = members_room(oserver, MEMBERS)
    element = oserver.element(users[0], room)["id"]
    watchers = [Watcher(oserver, u, transports) for u in users]
    sessions = [requests.Session() for _ in users]
    url = oserver.url(f"/api/rooms/{room}/elements/{element}/reactions/toggle")
    try:
        for w in watchers:
            w.join(room)
        names = ("element:reaction:added", "element:reaction:removed")
        failures = []
        with ThreadPoolExecutor(MEMBERS) as pool:
            for rnd in range(TOGGLE_ROUNDS):
                before = [len(w.of(*names)) for w in watchers]
                # Each member toggles in turn, all members at once; no X-Socket-Id, so every
                # member's socket gets every event.
                picks = [i % MEMBERS for i in range(TOGGLES_PER_ROUND)]
                statuses = list(pool.map(lambda i: sessions[i].post(url, headers=oserver.auth(users[i])).status_code, picks))
                assert statuses == [200] * len(picks), statuses
                r = sessions[0].get(oserver.url(f"/api/rooms/{room}/elements/{element}/reactions"), headers=oserver.auth(users[0]))
                server_count = r.json()["data"]["total"]
                assert wait_until(lambda: all(len(w.of(*names)) - b >= len(picks) for w, b in zip(watchers, before))), \
                    ("every watcher gets one event per toggle", rnd, [len(w.of(*names)) - b for w, b in zip(watchers, before)])
                last = [w.of(*names)[-1][1]["stats"]["totalReactions"] for w in watchers]
                if any(v != server_count for v in last):
                    failures.append((rnd, server_count, last))
        assert not failures, f"{len(failures)} of {TOGGLE_ROUNDS} rounds ended with another count on screen: {failures[:3]}"
    finally:
        for w in watchers:
            w.close()


def join_during_creates(w, rid, created, created_lock, active):
    """Lets the writers (waiting on `active`) create, joins `rid` with watcher `w` amid their
    creates, lets them create a few more, and stops them. Returns the elements acknowledged so far
    (`created`: (room, id) pairs) that reached the joiner neither in its one elements:batch nor
    as element:created, and those that reached it more than once."""
    with created_lock:
        start = len(created)
    active.set()
    wait_until(lambda: len(created) >= start + 3, timeout=10)  # the writers are at it
    w.join(rid)
    with created_lock:
        after_ack = len(created)
    wait_until(lambda: len(created) >= after_ack + 3, timeout=10)
    active.clear()
    # Every element acked so far must reach the joiner once; later ones may, once.
    with created_lock:
        known = [eid for (r, eid) in created if r == rid]
    batches = [p for (e, p) in w.of("elements:batch")]
    assert len(batches) == 1, batches
    batch_ids = [e["id"] for e in batches[0]["elements"]]

    def live_ids():
        return [p["element"]["id"] for (e, p) in w.of("element:created") if p["element"]["roomId"] == rid]
    wait_until(lambda: set(known) <= set(batch_ids) | set(live_ids()), timeout=10)
    seen = collections.Counter(batch_ids + live_ids())
    return [e for e in known if seen[e] == 0], [e for e, n in seen.items() if n > 1]


@pytest.mark.parametrize("transports", TRANSPORTS)
def test_a_join_during_concurrent_creates_gets_every_element_exactly_once(oserver, transports):
    users, room = members_room(oserver, 4)
    writers, joiner = users[:3], users[3]
    created, created_lock = [], threading.Lock()
    active, stop = threading.Event(), threading.Event()

    def write(user):
        s = requests.Session()
        while not stop.is_set():
            if not active.wait(0.05):
                continue
            r = s.post(oserver.url(f"/api/rooms/{room_box[0]}/elements"), headers=oserver.auth(user),
                       json={"type": "note", "positionX": 1, "positionY": 2, "width": 10, "height": 10})
            assert r.status_code == 201, r.text
            with created_lock:
                created.append((r.json()["data"]["roomId"], r.json()["data"]["id"]))

    room_box = [room]
    threads = [threading.Thread(target=write, args=(u,), daemon=True) for u in writers]
    for t in threads:
        t.start()
    problems = []
    try:
        for j in range(JOINS):
            if j and j % 25 == 0:  # a fresh room now and then keeps the batch small
                room_box[0] = oserver.room(users[0], users[1:])
            rid = room_box[0]
            w = Watcher(oserver, joiner, transports)
            try:
                missing, twice = join_during_creates(w, rid, created, created_lock, active)
                if missing or twice:
                    problems.append((j, len(missing), len(twice)))
            finally:
                w.close()
    finally:
        stop.set()
        active.set()
        for t in threads:
            t.join(10)
    assert not problems, f"{len(problems)} of {JOINS} joins missed or doubled elements (join, missing, twice): {problems[:5]}"


@pytest.mark.parametrize("transports", TRANSPORTS)
def test_myrooms_counts_from_global_events_end_equal_to_the_server(oserver, transports):
    users, room = members_room(oserver, 8)
    watchers = [Watcher(oserver, u, transports) for u in users]
    names = ("element:created:global", "element:deleted:global", "room:cleared:global")
    writes = collections.Counter()
    lock = threading.Lock()

    def count(w):
        n = 0
        for e, p in w.of(*names):
            if p["roomId"] != room:
                continue
            if e == "element:created:global":
                n += 1
            elif e == "element:deleted:global":
                n -= 1
            else:
                n = 0
        return n

    def member(i):
        s = requests.Session()
        mine = []
        for k in range(ORDER_MYROOMS_WRITES):
            if i < 2 and k % 5 == 4:  # two members clear now and then, amid the others' writes
                r = s.delete(oserver.url(f"/api/rooms/{room}/elements"), headers=oserver.auth(users[i]))
                assert r.status_code == 200, r.text
                with lock:
                    writes["cleared"] += 1
                continue
            if mine and k % 3 == 2:
                r = s.delete(oserver.url(f"/api/rooms/{room}/elements/{mine.pop(0)}"), headers=oserver.auth(users[i]))
                assert r.status_code in (200, 204, 404), r.text  # 404: a clear took it first (no event then)
                if r.status_code != 404:
                    with lock:
                        writes["deleted"] += 1
                continue
            r = s.post(oserver.url(f"/api/rooms/{room}/elements"), headers=oserver.auth(users[i]),
                       json={"type": "note", "positionX": 1, "positionY": 2, "width": 10, "height": 10})
            assert r.status_code == 201, r.text
            mine.append(r.json()["data"]["id"])
            with lock:
                writes["created"] += 1

    try:
        with ThreadPoolExecutor(len(users)) as pool:
            list(pool.map(member, range(len(users))))
        total = sum(writes.values())
        assert wait_until(lambda: all(len([1 for e, p in w.of(*names) if p["roomId"] == room]) >= total for w in watchers)), \
            "every member's socket gets every global event"
        rooms = requests.get(oserver.url("/api/rooms/my-rooms"), headers=oserver.auth(users[0])).json()["data"]
        server_count = next(r["elementCount"] for r in rooms if r["id"] == room)
        counts = [count(w) for w in watchers]
        assert counts == [server_count] * len(watchers), (server_count, counts, dict(writes))
    finally:
        for w in watchers:
            w.close()
