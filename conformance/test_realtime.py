"""Realtime conformance with real clients nobody here wrote: python-socketio (default
settings: HTTP long-polling, then the upgrade to WebSocket) and websocket-client
(raw Engine.IO/Socket.IO frames). The events are those of docs/realtime.md."""
import json
import re
import socket
import threading
import time

import pytest
import requests
import socketio
import websocket


class Recorder:
    """A python-socketio client that records every event it receives, in the order it received them.

    python-engineio's client hands every Engine.IO message to a new thread (engineio/client.py,
    `_receive_packet`: `_trigger_event('message', ..., run_async=True)`), so two events that arrive
    back to back are recorded in whichever order their threads happen to run, and one can be
    recorded a scheduling delay after the other (seconds on a loaded machine). The recorder runs
    them on the client's read loop instead, as a Socket.IO client without threads (the JavaScript
    and Swift ones) does: `events` is then the wire order. Handlers here only append, so nothing
    on the read loop blocks (an acknowledgement still arrives while `call` waits)."""

    def __init__(self, transports=None):
        self.client = socketio.Client(reconnection=False)
        self.events = []
        self.lock = threading.Lock()
        self.transports = transports
        eio = self.client.eio
        trigger = eio._trigger_event

        def in_order(event, *args, **kwargs):
            kwargs.pop("run_async", None)
            return trigger(event, *args, **kwargs)
        eio._trigger_event = in_order

        @self.client.on("*")
        def catch_all(event, *args):
            with self.lock:
                self.events.append((event, args[0] if args else None))

    def connect(self, server, auth=None, query=None, headers=None):
        url = server.base + (("?" + query) if query else "")
        kwargs = {"wait_timeout": 10}
        if self.transports:
            kwargs["transports"] = self.transports
        self.client.connect(url, auth=auth, headers=headers or {}, **kwargs)
        return self

    def of(self, name):
        with self.lock:
            return [p for (e, p) in self.events if e == name]

    def wait_for(self, name, count=1, timeout=5.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            got = self.of(name)
            if len(got) >= count:
                return got
            time.sleep(0.02)
        return self.of(name)

    def close(self):
        try:
            self.client.disconnect()
        except Exception:
            pass


@pytest.fixture
def clients():
    made = []

    def make(transports=None):
        r = Recorder(transports)
        made.append(r)
        return r
    yield make
    for r in made:
        r.close()


AUTH_WAYS = ["auth-payload", "query", "header"]


def connect_with(server, recorder, user, way):
    if way == "auth-payload":
        return recorder.connect(server, auth={"token": user["token"]})
    if way == "query":
        return recorder.connect(server, query="token=" + user["token"])
    return recorder.connect(server, headers={"Authorization": "Bearer " + user["token"]})


@pytest.mark.parametrize("way", AUTH_WAYS)
@pytest.mark.parametrize("transports", [None, ["websocket"]], ids=["default-polling-upgrade", "websocket-only"])
def test_connect_with_each_auth_way(server, clients, way, transports):
    user = server.register("conn")
    room = server.room(user)
    c = connect_with(server, clients(transports), user, way)
    assert c.client.connected
    ack = c.client.call("room:join", {"roomId": room}, timeout=5)
    assert ack == {"roomId": room, "elementCount": 0}
    if transports is None:
        # python-socketio opens with long-polling and upgrades to WebSocket.
        deadline = time.time() + 5
        while c.client.transport() != "websocket" and time.time() < deadline:
            time.sleep(0.05)
        assert c.client.transport() == "websocket"


@pytest.mark.parametrize("transports", [None, ["websocket"]], ids=["default", "websocket-only"])
def test_bad_or_missing_token_is_refused(server, transports):
    for auth in [{"token": "not-a-token"}, None]:
        c = socketio.Client(reconnection=False)
        kwargs = {"wait_timeout": 5}
        if transports:
            kwargs["transports"] = transports
        with pytest.raises(socketio.exceptions.ConnectionError):
            c.connect(server.base, auth=auth, **kwargs)
        c.disconnect()


def test_raw_connect_error_payload(server):
    """The CONNECT_ERROR packet is exactly `44{"message":"unauthorized"}`; another namespace gets one too."""
    ws = websocket.create_connection(server.base.replace("http", "ws") + "/socket.io/?EIO=4&transport=websocket", timeout=5)
    try:
        opened = ws.recv()
        assert opened.startswith("0{")
        handshake = json.loads(opened[1:])
        assert handshake["upgrades"] == [] and handshake["pingInterval"] == 25000 and handshake["pingTimeout"] == 20000
        assert handshake["maxPayload"] == 1000000
        ws.send('40{"token":"bad"}')
        assert json.loads(ws.recv()[2:]) == {"message": "unauthorized"}
        ws.send('40/admin,{"token":"bad"}')
        reply = ws.recv()
        assert reply.startswith("44/admin,"), reply
    finally:
        ws.close()


def test_rest_toggle_reaches_other_member_with_their_own_has_reacted(server, clients):
    a = server.register("alice")
    b = server.register("bob")
    room = server.room(a, [b])
    el = server.element(a, room)
    cb = clients().connect(server, auth={"token": b["token"]})
    cb.client.call("room:join", {"roomId": room}, timeout=5)
    ca = clients().connect(server, auth={"token": a["token"]})
    ca.client.call("room:join", {"roomId": room}, timeout=5)

    # A toggles over REST, naming its socket: B gets the event, A's socket does not.
    r = requests.post(server.url(f"/api/rooms/{room}/elements/{el['id']}/reactions/toggle"), headers=server.auth(a, ca.client.get_sid()))
    assert r.status_code == 200 and r.json()["data"]["action"] == "added"
    got = cb.wait_for("element:reaction:added")
    assert len(got) == 1
    ev = got[0]
    assert ev["elementId"] == el["id"] and ev["roomId"] == room
    assert ev["reaction"]["userId"] == a["id"] and ev["reaction"]["type"] == "heart"
    assert ev["stats"]["totalReactions"] == 1 and ev["stats"]["count"] == 1
    assert ev["stats"]["hasReacted"] is False, "B has not reacted: stats are per recipient"
    assert ev["stats"]["userReaction"] is None
    assert [u["id"] for u in ev["stats"]["topReactors"]] == [a["id"]]
    time.sleep(0.3)
    assert ca.of("element:reaction:added") == [], "the socket that caused the event is skipped"

    # B reacts over the socket: A gets the event with A's own hasReacted = True.
    ack = cb.client.call("element:reaction:toggle", {"roomId": room, "elementId": el["id"]}, timeout=5)
    assert ack["action"] == "added" and ack["elementStats"]["totalReactions"] == 2
    got = ca.wait_for("element:reaction:added")
    assert got and got[0]["stats"]["hasReacted"] is True and got[0]["stats"]["totalReactions"] == 2

    # B removes: A gets element:reaction:removed.
    cb.client.call("element:reaction:toggle", {"roomId": room, "elementId": el["id"]}, timeout=5)
    removed = ca.wait_for("element:reaction:removed")
    assert removed and removed[0]["userId"] == b["id"] and removed[0]["stats"]["totalReactions"] == 1
    assert removed[0]["stats"]["hasReacted"] is True


def test_element_create_acks_and_broadcasts_and_global_scoping(server, clients):
    a = server.register("alice")
    b = server.register("bob")
    c = server.register("carol")          # member who does not join the room
    outsider = server.register("mallory")  # not a member
    room = server.room(a, [b, c])
    ca = clients().connect(server, auth={"token": a["token"]})
    ca.client.call("room:join", {"roomId": room}, timeout=5)
    cb = clients(["websocket"]).connect(server, auth={"token": b["token"]})
    cb.client.call("room:join", {"roomId": room}, timeout=5)
    cc = clients().connect(server, auth={"token": c["token"]})
    co = clients().connect(server, auth={"token": outsider["token"]})

    ack = ca.client.call("element:create", {"roomId": room, "type": "photo", "positionX": 5, "positionY": 6,
                                             "width": 10, "height": 20, "imageUrl": "https://x/y.png"}, timeout=5)
    assert set(ack.keys()) == {"element"}
    element = ack["element"]
    assert element["type"] == "photo" and element["reactions"] is None and element["createdBy"] == a["id"]

    created = cb.wait_for("element:created")
    assert created and created[0]["element"]["id"] == element["id"]
    glob = cc.wait_for("element:created:global")
    assert glob == [{"roomId": room, "elementId": element["id"], "createdBy": a["id"], "type": "photo"}]
    time.sleep(0.3)
    assert cc.of("element:created") == [], "a member who did not join gets only the global event"
    assert co.events == [], "a non-member gets nothing"
    assert ca.of("element:created") == [], "the creating socket is skipped"

    # Delete and clear over the socket, with their acks and broadcasts.
    ack = ca.client.call("element:delete", {"roomId": room, "elementId": element["id"]}, timeout=5)
    assert ack == {"elementId": element["id"]}
    assert cb.wait_for("element:deleted") == [{"elementId": element["id"], "roomId": room}]
    assert cc.wait_for("element:deleted:global")[0]["deletedBy"] == a["id"]
    server.element(b, room)
    ack = ca.client.call("room:clear", {"roomId": room}, timeout=5)
    assert ack == {"roomId": room, "deleted": 1}
    assert cb.wait_for("room:cleared") == [{"roomId": room, "clearedBy": a["id"]}]
    assert cc.wait_for("room:cleared:global") == [{"roomId": room, "clearedBy": a["id"]}]
    time.sleep(0.2)
    assert co.events == []


def test_room_join_sends_one_batch_and_checks_membership(server, clients):
    a = server.register("alice")
    outsider = server.register("mallory")
    room = server.room(a)
    ids = [server.element(a, room, content=f"e{i}")["id"] for i in range(5)]
    ca = clients().connect(server, auth={"token": a["token"]})
    ack = ca.client.call("room:join", {"roomId": room}, timeout=5)
    assert ack == {"roomId": room, "elementCount": 5}
    batches = ca.wait_for("elements:batch")
    time.sleep(0.2)
    assert len(ca.of("elements:batch")) == 1
    assert batches[0]["roomId"] == room and [e["id"] for e in batches[0]["elements"]] == ids
    assert ca.of("element:created") == [], "no legacy per-element events by default"

    co = clients().connect(server, auth={"token": outsider["token"]})
    denied = co.client.call("room:join", {"roomId": room}, timeout=5)
    assert denied["error"]["code"] == "FORBIDDEN"
    missing = co.client.call("room:join", {"roomId": "no-such-room"}, timeout=5)
    assert missing["error"]["code"] == "NOT_FOUND"
    bad = co.client.call("room:join", "not an object", timeout=5)
    assert bad["error"]["code"] == "VALIDATION_ERROR"
    assert co.client.connected, "a bad payload never kills the socket"
    bad2 = ca.client.call("element:create", {"roomId": room, "type": "sticker", "positionX": 1, "positionY": 1, "width": 1, "height": 1}, timeout=5)
    assert bad2["error"]["code"] == "VALIDATION_ERROR"
    # A bad member of a decoded payload is refused as the REST body check refuses it: the same
    # field and message, the first bad member in the order the event reads them.
    for event, payload, message in [
        ("room:join", {}, "roomId: is required"),
        ("room:join", {"roomId": None}, "roomId: is required"),
        ("room:join", {"roomId": 5}, "roomId: must be a string"),
        ("room:leave", {"roomId": ""}, "roomId: must not be empty"),
        ("room:join", {"roomId": "a" * 65}, "roomId: must be at most 64 characters"),
        ("element:delete", {"roomId": 1, "elementId": []}, "elementId: must be a string"),
        ("element:reaction:toggle", {"roomId": room, "elementId": {}}, "elementId: must be a string"),
        ("element:update", {"roomId": room}, "elementId: is required"),
    ]:
        refused = co.client.call(event, payload, timeout=5)
        assert refused == {"error": {"code": "VALIDATION_ERROR", "message": message}}, (event, payload, refused)


def test_room_updated_and_message_created(server, clients):
    a = server.register("alice")
    b = server.register("bob")
    room = server.room(a, [b])
    cb = clients().connect(server, auth={"token": b["token"]})
    cb.client.call("room:join", {"roomId": room}, timeout=5)
    r = requests.patch(server.url(f"/api/rooms/{room}"), json={"name": "Renamed"}, headers=server.auth(a))
    assert r.status_code == 200
    upd = cb.wait_for("room:updated")
    assert upd and upd[0]["room"]["name"] == "Renamed" and upd[0]["room"]["nameSetByUser"]["id"] == a["id"]
    r = requests.post(server.url(f"/api/rooms/{room}/messages"), json={"text": "hello"}, headers=server.auth(a))
    assert r.status_code == 201
    msg = cb.wait_for("message:created")
    assert msg and msg[0]["message"]["text"] == "hello" and msg[0]["message"]["user"]["id"] == a["id"]


def test_slow_consumer_is_dropped_while_others_keep_receiving(server, clients):
    a = server.register("alice")
    b = server.register("bob")
    slow_user = server.register("slow")
    room = server.room(a, [b, slow_user])
    cb = clients(["websocket"]).connect(server, auth={"token": b["token"]})
    cb.client.call("room:join", {"roomId": room}, timeout=5)

    # A raw websocket client with a tiny receive buffer that joins and then never reads.
    ws = websocket.create_connection(server.base.replace("http", "ws") + "/socket.io/?EIO=4&transport=websocket", timeout=5,
                                     sockopt=((socket.SOL_SOCKET, socket.SO_RCVBUF, 4096),))
    assert ws.recv().startswith("0{")
    ws.send(json.dumps({"token": slow_user["token"]}).join(["40", ""]))
    assert ws.recv().startswith("40{")
    ws.send('420["room:join",{"roomId":"%s"}]' % room)
    # Read the join ack and the batch, then stop reading.
    seen = 0
    while seen < 2:
        frame = ws.recv()
        if frame.startswith("43") or frame.startswith("42"):
            seen += 1

    # The slow socket's kernel buffers stay small (its 4 KiB receive window keeps the server's
    # send buffer from growing), so 3.2 MB overflows them and the server's 256 KiB per-socket
    # bound (conftest.py), while a client that reads keeps up with room to spare.
    big = "x" * 16000
    n = 200
    for i in range(n):
        server.element(a, room, content=big)
    got = cb.wait_for("element:created", count=n, timeout=20)
    assert len(got) == n, "the fast client got every event"

    # The slow socket was dropped: draining it ends in a close, not in all n events.
    ws.settimeout(5)
    received = 0
    closed = False
    try:
        while True:
            frame = ws.recv()
            if frame == "" or frame is None:
                closed = True
                break
            if frame.startswith('42["element:created",'):
                received += 1
    except (websocket.WebSocketConnectionClosedException, ConnectionResetError, BrokenPipeError, OSError):
        closed = True
    except websocket.WebSocketTimeoutException:
        closed = False
    assert closed, f"the slow consumer's connection was closed (it read {received}/{n} events)"
    assert received < n, f"the slow consumer was dropped before receiving all events ({received}/{n})"
    assert any("slow" in l.lower() for l in server.log_lines), "the drop is logged"
    # /metrics counts the slow consumer it disconnected.
    metrics = requests.get(server.url("/metrics")).text
    m = re.search(r"^touchsync_realtime_slow_consumers_disconnected_total (\S+)$", metrics, re.M)
    assert m and float(m.group(1)) >= 1, "slow consumers disconnected are counted in /metrics"
    d = re.search(r"^touchsync_realtime_events_dropped_total (\S+)$", metrics, re.M)
    assert d and float(d.group(1)) >= 1, "the event that overflowed the slow consumer is counted as dropped"


def test_every_socket_element_carries_reactions_for_its_recipient(server, clients):
    """Every element carries `reactions` for the caller (null while it has none), in
    socket payloads too: the join batch, element:created/updated and the element:update ack."""
    a = server.register("alice")
    b = server.register("bob")
    room = server.room(a, [b])
    hearted = server.element(a, room, content="hearted")
    plain = server.element(a, room, content="plain")
    r = requests.post(server.url(f"/api/rooms/{room}/elements/{hearted['id']}/reactions/toggle"), headers=server.auth(b))
    assert r.status_code == 200 and r.json()["data"]["action"] == "added"

    ca = clients().connect(server, auth={"token": a["token"]})
    ca.client.call("room:join", {"roomId": room}, timeout=5)
    cb = clients().connect(server, auth={"token": b["token"]})
    cb.client.call("room:join", {"roomId": room}, timeout=5)

    def by_id(batch):
        return {e["id"]: e for e in batch[0]["elements"]}
    a_batch = by_id(ca.wait_for("elements:batch"))
    b_batch = by_id(cb.wait_for("elements:batch"))
    for batch in (a_batch, b_batch):
        assert "reactions" in batch[plain["id"]] and batch[plain["id"]]["reactions"] is None, "null, not omitted"
        assert batch[hearted["id"]]["reactions"]["count"] == 1
        assert [u["id"] for u in batch[hearted["id"]]["reactions"]["topReactors"]] == [b["id"]]
    assert a_batch[hearted["id"]]["reactions"]["hasReacted"] is False and a_batch[hearted["id"]]["reactions"]["userReaction"] is None
    assert b_batch[hearted["id"]]["reactions"]["hasReacted"] is True and b_batch[hearted["id"]]["reactions"]["userReaction"] == "heart"

    # A moves the hearted element over the socket: A's ack is A's view, B's broadcast is B's view.
    ack = ca.client.call("element:update", {"roomId": room, "elementId": hearted["id"], "positionX": 42}, timeout=5)
    assert ack["element"]["positionX"] == 42
    assert ack["element"]["reactions"]["count"] == 1 and ack["element"]["reactions"]["hasReacted"] is False
    upd = cb.wait_for("element:updated")
    assert upd and upd[0]["element"]["id"] == hearted["id"]
    assert upd[0]["element"]["reactions"]["hasReacted"] is True and upd[0]["element"]["reactions"]["userReaction"] == "heart"

    # Over REST (no X-Socket-Id), A's socket gets the update too, with A's own view.
    r = requests.patch(server.url(f"/api/rooms/{room}/elements/{hearted['id']}"), json={"positionY": 7}, headers=server.auth(b))
    assert r.status_code == 200 and r.json()["data"]["reactions"]["hasReacted"] is True
    upd = ca.wait_for("element:updated")
    assert upd and upd[0]["element"]["positionY"] == 7 and upd[0]["element"]["reactions"]["hasReacted"] is False

    # A new element has `reactions: null` in the broadcast as well.
    created = server.element(a, room, content="new")
    got = cb.wait_for("element:created")
    assert got and got[0]["element"]["id"] == created["id"]
    assert "reactions" in got[0]["element"] and got[0]["element"]["reactions"] is None


def _lines_after(server, start, predicate, timeout=5.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        found = [l for l in list(server.log_lines)[start:] if predicate(l)]
        if found:
            return found
        time.sleep(0.05)
    return []


def test_log_has_one_line_per_request_and_socket_connect_disconnect_with_reason(server, clients):
    """One line per request (method, path with ids, status, duration, request id,
    user id); one per socket connect and disconnect, with the reason."""
    a = server.register("logger")
    room = server.room(a)
    start = len(server.log_lines)
    r = requests.get(server.url(f"/api/rooms/{room}"), headers=server.auth(a))
    assert r.status_code == 200
    req_id = r.headers["X-Request-Id"]
    lines = _lines_after(server, start, lambda l: req_id in l)
    assert len(lines) == 1, f"exactly one line for request {req_id}: {lines}"
    line = lines[0]
    assert f"GET /api/rooms/{room} 200 " in line, line
    assert re.search(r" \d+(\.\d+)?ms ", line), "the duration: " + line
    assert f"user={a['id']}" in line, line

    # An unauthenticated failure names no user, and still gets its line and status.
    r = requests.get(server.url("/api/rooms/no-such-room"))
    assert r.status_code == 401
    lines = _lines_after(server, start, lambda l: r.headers["X-Request-Id"] in l)
    assert len(lines) == 1 and "GET /api/rooms/no-such-room 401 " in lines[0] and "user=-" in lines[0], lines

    # A malformed request is an error logged with its context: status, reason, request id, peer.
    host, port = server.base.rsplit("/", 1)[1].split(":")
    with socket.create_connection((host, int(port)), timeout=5) as raw:
        raw.sendall(b"GET / HTTP/1.1\r\nHost: h\r\nBad Header: x\r\n\r\n")
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = raw.recv(4096)
            if not chunk:
                break
            head += chunk
    assert head.startswith(b"HTTP/1.1 400"), head
    rid = re.search(rb"(?i)x-request-id: *(\S+)", head).group(1).decode()
    rejected = _lines_after(server, start, lambda l: rid in l)
    assert len(rejected) == 1 and "400" in rejected[0] and "127.0.0.1" in rejected[0], rejected

    c = clients(["websocket"]).connect(server, auth={"token": a["token"]})
    sid = c.client.get_sid()
    connected = _lines_after(server, start, lambda l: "socket connected" in l and sid in l)
    assert len(connected) == 1 and f"user={a['id']}" in connected[0] and "transport=websocket" in connected[0], connected
    c.close()
    gone = _lines_after(server, start, lambda l: "socket disconnected" in l and sid in l)
    assert len(gone) == 1 and f"user={a['id']}" in gone[0], gone
    reason = re.search(r"reason=(\S.*)$", gone[0].strip())
    assert reason and reason.group(1).strip(), "the disconnect names its reason: " + gone[0]


def test_docs_realtime_md_documents_every_event_the_server_knows():
    """docs/realtime.md lists every Socket.IO event (direction, payload, ack); it
    cannot drift from the event names in the server's sources."""
    import glob
    import os
    from conftest import ROOT
    names = set()
    for path in glob.glob(os.path.join(ROOT, "Sources", "TSDomain", "**", "*.swift"), recursive=True) + \
            glob.glob(os.path.join(ROOT, "Sources", "TSRealtime", "Events", "*.swift")):
        with open(path) as f:
            names |= set(re.findall(r'"([a-z]+(?::[a-z]+)+)"', f.read()))
    assert len(names) >= 19, names
    with open(os.path.join(ROOT, "docs", "realtime.md")) as f:
        doc = f.read()
    documented = set(re.findall(r"^\| `([a-z]+(?::[a-z]+)+)` \|", doc, re.M))
    assert names <= documented, f"events missing from docs/realtime.md's tables: {sorted(names - documented)}"
