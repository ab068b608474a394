"""A client's life across server restarts, vanished networks and app backgrounding, with real
clients nobody here wrote (python-socketio 5 from .venv; python-socketio 4 over Engine.IO v3 from
.venv-eio3) against a real `touchsync serve` process on a file database.

Every scenario runs over WebSocket and polling only, with and without connection state recovery.
The app under test does what an app does: `room:join` in its `connect` handler (unless the
connect recovered its session: same socket id, rooms restored by the server), and records every
`elements:batch` and `element:created` it receives. Elements are created over REST by another
member of the room.

What the reference server does, and so what these tests expect (docs/realtime.md, "What a client
sees"):
- a restart (SIGTERM) sends no Socket.IO DISCONNECT; transports close (`transport close` on the
  client), so clients reconnect by themselves with their backoff;
- a network that vanishes without a FIN/RST is noticed by the server's heartbeat within
  pingInterval + pingTimeout and the socket is freed; the client reconnects when it can;
- an app that disconnects (background) and connects again re-joins and gets the full batch.
"""
import json
import os
import re
import select
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid

import pytest
import requests
import socketio

from conftest import start_serve, wait_for

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EIO3_PYTHON = os.path.join(ROOT, ".venv-eio3", "bin", "python")
EIO3_CLIENT = os.path.join(ROOT, "conformance", "eio3", "lifecycle_eio3.py")

PING_INTERVAL_MS = 600
PING_TIMEOUT_MS = 600
TRANSPORTS = {"websocket": ["websocket"], "polling": ["polling"], "default": None}




class LifecycleServer:
    """`touchsync serve` on a file database that outlives restarts, on the port of its first start."""

    def __init__(self, recovery=False, eio3=False, short_heartbeat=True):
        self.tmp = tempfile.mkdtemp(prefix="touchsync-lifecycle-")
        self.env = {
            "TOUCHSYNC_AUTH_PASSWORD_ITERATIONS": "1000",
            "TOUCHSYNC_JWT_SECRET": "conformance-secret-0123456789abcdef",
            "TOUCHSYNC_LOG_LEVEL": "info",
        }
        if short_heartbeat:
            self.env["TOUCHSYNC_REALTIME_PING_INTERVAL_MS"] = str(PING_INTERVAL_MS)
            self.env["TOUCHSYNC_REALTIME_PING_TIMEOUT_MS"] = str(PING_TIMEOUT_MS)
        if recovery:
            self.env["TOUCHSYNC_REALTIME_CONNECTION_STATE_RECOVERY_MAX_DISCONNECTION_DURATION"] = "30000"
        if eio3:
            self.env["TOUCHSYNC_REALTIME_ALLOW_E_I_O3"] = "true"
        self.port = 0
        self.proc = None
        self.runs = []
        self.start()

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    @property
    def lines(self):
        """The output of every process so far (each keeps growing while it runs)."""
        return [l for run in self.runs for l in run]

    def start(self):
        proc, base, lines = start_serve(["--database", os.path.join(self.tmp, "db.sqlite")], self.env, port=self.port)
        self.runs.append(lines)
        assert base, "server did not start:\n" + "".join(lines)
        self.proc = proc
        started = int(base.rsplit(":", 1)[1])
        assert self.port in (0, started), f"restarted on {started}, not {self.port}"
        self.port = started

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(timeout=15) == 0, "SIGTERM ends the server with exit 0:\n" + "".join(self.lines[-20:])

    def restart(self):
        self.stop()
        self.start()

    def disconnected(self, reason):
        return [l for l in self.lines if "socket disconnected" in l and f"reason={reason}" in l]

    def sockets_connected(self):
        text = requests.get(self.base + "/metrics", timeout=5).text
        return sum(float(m.group(1)) for m in re.finditer(r"^touchsync_sockets_connected\{[^}]*\} (\S+)$", text, re.M))

    # REST, as the other member of the room would use it.
    def register(self, prefix):
        name = f"{prefix}_{uuid.uuid4().hex[:8]}"
        r = requests.post(self.base + "/api/auth/register", json={"username": name, "password": "password-123", "firstName": prefix})
        assert r.status_code == 201, r.text
        d = r.json()["data"]
        return {"id": d["user"]["id"], "token": d["token"]}

    def room(self, owner, member):
        r = requests.post(self.base + "/api/rooms", json={"memberIds": [member["id"]]},
                          headers={"Authorization": "Bearer " + owner["token"]})
        assert r.status_code == 201, r.text
        return r.json()["data"]["id"]

    def element(self, user, room_id):
        r = requests.post(self.base + f"/api/rooms/{room_id}/elements",
                          json={"type": "note", "positionX": 1, "positionY": 2, "width": 100, "height": 50},
                          headers={"Authorization": "Bearer " + user["token"]})
        assert r.status_code == 201, r.text
        return r.json()["data"]["id"]

    def my_room(self, user, room_id):
        r = requests.get(self.base + "/api/rooms/my-rooms", headers={"Authorization": "Bearer " + user["token"]})
        assert r.status_code == 200, r.text
        return next(room for room in r.json()["data"] if room["id"] == room_id)


class BlackholeProxy:
    """A TCP proxy between the client and the server that can make the network vanish: once
    `vanish()` is called nothing more is forwarded in either direction and nothing is closed, so
    no FIN or RST reaches either end (as when a phone loses its radio); new connections reach
    nothing either. `restore()` brings the network back: the dead connections are dropped (the
    client's side of each ends) and new ones are forwarded again."""

    def __init__(self, target_port):
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.gone = False
        self.live = []   # [client, upstream] pairs being forwarded
        self.dead = []   # sockets held open while the network is gone
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                if self.gone:
                    self.dead.append(client)
                    continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
            except OSError:
                client.close()
                continue
            pair = [client, upstream]
            with self.lock:
                self.live.append(pair)
            threading.Thread(target=self._pump, args=(pair,), daemon=True).start()

    def _pump(self, pair):
        client, upstream = pair
        other = {client: upstream, upstream: client}
        try:
            while True:
                with self.lock:
                    forwarding = pair in self.live
                if not forwarding:
                    return  # vanished: this thread stops reading; the sockets stay open
                readable, _, _ = select.select([client, upstream], [], [], 0.05)
                for s in readable:
                    data = s.recv(65536)
                    if not data:
                        raise OSError("closed")
                    other[s].sendall(data)
        except OSError:
            with self.lock:
                if pair in self.live:
                    self.live.remove(pair)
                    client.close()
                    upstream.close()

    def vanish(self):
        with self.lock:
            self.gone = True
            for pair in self.live:
                self.dead.extend(pair)
            self.live = []

    def restore(self):
        with self.lock:
            self.gone = False
            dead, self.dead = self.dead, []
        for s in dead:
            s.close()

    def close(self):
        self.listener.close()
        self.restore()


class App:
    """What a TouchSync app does with python-socketio 5, default reconnection options.

    With `recovery`, it also does what socket.io-client >= 4.6 does by itself and python-socketio
    does not: it keeps the `pid` from the CONNECT reply and the last event's offset (the event's
    last argument) and sends both in its CONNECT auth on every reconnect.

    python-socketio runs each received message's handler on its own thread, so handlers may run
    out of arrival order: the app keeps the newest offset by its sequence number (`<boot>-<n>`),
    as an in-order client would hold it, and records each element:created with that number."""

    def __init__(self, base, user, room_id, transports, recovery=False):
        self.room_id = room_id
        self.recovery = recovery
        self.cond = threading.Condition()
        self.sids = []
        self.batches = []      # element ids of each elements:batch
        self.created = []      # element ids of element:created, as handled
        self.created_seq = {}  # element id -> offset sequence numbers (recovery only)
        self.joined = 0        # room:join acks
        self.reasons = []      # disconnect reasons
        self.pid = None
        self.offset = None
        app = self

        class RecoveringClient(socketio.Client):
            def _handle_connect(self, namespace, data):
                if app.recovery and isinstance(data, dict) and data.get("pid"):
                    app.pid = data["pid"]
                super()._handle_connect(namespace, data)

        self.sio = sio = RecoveringClient()

        def auth():
            a = {"token": user["token"]}
            if recovery and self.pid:
                a["pid"] = self.pid
                if self.offset:
                    a["offset"] = self.offset
            return a
        self.auth = auth

        @sio.event
        def connect():
            sid = sio.get_sid()
            with self.cond:
                recovered = self.recovery and bool(self.sids) and sid == self.sids[-1]
                self.sids.append(sid)
                self.cond.notify_all()
            if not recovered:
                sio.emit("room:join", {"roomId": room_id}, callback=self._on_joined)

        @sio.event
        def disconnect(reason=None):
            with self.cond:
                self.reasons.append(reason)
                self.cond.notify_all()

        @sio.on("*")
        def any_event(event, *args):
            with self.cond:
                seq = None
                if self.recovery and args and isinstance(args[-1], str) and "-" in args[-1]:
                    seq = int(args[-1].rsplit("-", 1)[1])
                    if self.offset is None or seq > int(self.offset.rsplit("-", 1)[1]) or \
                            self.offset.rsplit("-", 1)[0] != args[-1].rsplit("-", 1)[0]:
                        self.offset = args[-1]
                if event == "elements:batch":
                    self.batches.append([e["id"] for e in args[0]["elements"]])
                elif event == "element:created":
                    self.created.append(args[0]["element"]["id"])
                    self.created_seq.setdefault(args[0]["element"]["id"], []).append(seq)
                self.cond.notify_all()

        sio.connect(base, auth=auth, transports=transports, wait_timeout=10)

    def _on_joined(self, *ack):
        with self.cond:
            self.joined += 1
            self.cond.notify_all()

    def wait(self, predicate, timeout=20, what="condition"):
        with self.cond:
            ok = self.cond.wait_for(lambda: predicate(self), timeout=timeout)
        assert ok, f"{what} within {timeout} s: sids={self.sids} batches={self.batches} created={self.created} reasons={self.reasons}"

    def in_offset_order(self):
        """element:created ids ordered by their offsets (recovery only)."""
        return [i for _, i in sorted((seq, i) for i, seqs in self.created_seq.items() for seq in seqs)]

    def close(self):
        self.sio.disconnect()


def setup_room(server):
    owner = server.register("owner")
    member = server.register("member")
    room_id = server.room(owner, member)
    return owner, member, room_id


@pytest.fixture(params=[False, True], ids=["plain", "recovery"])
def recovery(request):
    return request.param


def ended(s):
    if s.proc.poll() is None:
        s.proc.terminate()
        s.proc.wait(timeout=15)


@pytest.fixture
def srv(recovery):
    """Short heartbeat (600 + 600 ms), so that a vanished network is noticed quickly."""
    s = LifecycleServer(recovery=recovery)
    yield s
    ended(s)


@pytest.fixture
def srv_default_heartbeat(recovery):
    """The default heartbeat (25 s): a polling client's GET stays parked until the stop."""
    s = LifecycleServer(recovery=recovery, short_heartbeat=False)
    yield s
    ended(s)


# Every client comes back after a restart, whatever its transport setting: polling only, WebSocket
# only, and the default (polling, then the upgrade). A parked GET is not answered at the stop (its
# connection just closes, as when a process exits): python-engineio (4.15 and 3.14) would read an
# Engine.IO `1` there as a server disconnect and stay away. They run with the default heartbeat so
# that the GET is parked at the stop.
RESTART_TRANSPORTS = ["websocket", "polling", "default"]


@pytest.mark.parametrize("transport", RESTART_TRANSPORTS)
def test_after_a_restart_on_the_same_port_the_client_reconnects_rejoins_and_gets_new_events(srv_default_heartbeat, recovery, transport):
    srv = srv_default_heartbeat
    owner, member, room_id = setup_room(srv)
    e0 = srv.element(owner, room_id)
    app = App(srv.base, member, room_id, TRANSPORTS[transport], recovery=recovery)
    try:
        app.wait(lambda a: a.joined == 1 and len(a.batches) == 1, what="first room:join")
        assert app.batches == [[e0]]
        e1 = srv.element(owner, room_id)
        app.wait(lambda a: a.created == [e1], what="live element:created")
        # Over polling, the GET that follows that event must be parked on the server when the stop
        # comes (else it meets a closed connection: a transport error, not the close packet);
        # nothing on the client says when it is, so give it a moment.
        time.sleep(0.5)

        srv.restart()
        app.wait(lambda a: len(a.reasons) >= 1, what="the disconnect")
        assert app.reasons[0] != socketio.Client.reason.SERVER_DISCONNECT, \
            "a restart is not a kick: no Socket.IO DISCONNECT, the transport just closes"
        app.wait(lambda a: a.joined == 2 and len(a.batches) == 2, timeout=12, what="reconnect and room:join after the restart")
        assert len(app.sids) == 2 and app.sids[1] != app.sids[0], "a new process: a fresh session (no recovery across a restart)"
        assert sorted(app.batches[1]) == sorted([e0, e1]), "the join after the restart gives the full batch"
        e2 = srv.element(owner, room_id)
        app.wait(lambda a: a.created == [e1, e2], what="the next element:created after the restart")
        assert srv.disconnected("server shutting down"), "".join(srv.lines[-30:])
    finally:
        app.close()


@pytest.mark.parametrize("transport", ["websocket", "polling"])
def test_a_vanished_network_is_noticed_by_the_heartbeat_the_socket_freed_and_the_client_comes_back(srv, recovery, transport):
    owner, member, room_id = setup_room(srv)
    proxy = BlackholeProxy(srv.port)
    app = App(proxy.base, member, room_id, TRANSPORTS[transport], recovery=recovery)
    try:
        app.wait(lambda a: a.joined == 1 and len(a.batches) == 1, what="first room:join")
        e1 = srv.element(owner, room_id)
        app.wait(lambda a: a.created == [e1], what="live element:created")
        assert srv.sockets_connected() == 1

        proxy.vanish()
        vanished = time.time()
        assert wait_for(lambda: srv.disconnected("ping timeout"), timeout=10), "".join(srv.lines[-20:])
        noticed = time.time() - vanished
        budget = (PING_INTERVAL_MS + PING_TIMEOUT_MS) / 1000
        assert noticed < budget + 1.0, f"noticed after {noticed:.2f} s; pingInterval + pingTimeout is {budget} s"
        assert wait_for(lambda: srv.sockets_connected() == 0, timeout=5), "the socket is freed"

        e2 = srv.element(owner, room_id)
        e3 = srv.element(owner, room_id)
        proxy.restore()
        if recovery:
            # Same socket id and rooms, and the events it missed replayed in order: no gap, no duplicate.
            app.wait(lambda a: len(a.sids) == 2 and len(a.created) == 3, timeout=30, what="recovered with the missed events")
            assert app.sids[1] == app.sids[0], "the session is recovered"
            assert app.in_offset_order() == [e1, e2, e3], app.created_seq
            assert app.joined == 1 and len(app.batches) == 1, "no room:join needed: the rooms came back"
        else:
            app.wait(lambda a: a.joined == 2 and len(a.batches) == 2, timeout=30, what="reconnect and room:join")
            assert sorted(app.batches[1]) == sorted([e1, e2, e3]), "the join gives the full batch"
            assert app.created == [e1]
        e4 = srv.element(owner, room_id)
        app.wait(lambda a: e4 in a.created, what="the next live event")
        assert len(app.created) == len(set(app.created)), f"no duplicate: {app.created}"
        if recovery:
            assert app.in_offset_order() == [e1, e2, e3, e4], app.created_seq
    finally:
        app.close()
        proxy.close()


@pytest.mark.parametrize("transport", ["websocket", "polling"])
def test_back_from_the_background_the_join_gives_the_full_batch_and_my_rooms_counts_are_right(srv, recovery, transport):
    owner, member, room_id = setup_room(srv)
    app = App(srv.base, member, room_id, TRANSPORTS[transport], recovery=recovery)
    try:
        app.wait(lambda a: a.joined == 1 and len(a.batches) == 1, what="first room:join")
        e1 = srv.element(owner, room_id)
        app.wait(lambda a: a.created == [e1], what="live element:created")

        app.sio.disconnect()  # the app goes to the background
        app.wait(lambda a: len(a.reasons) == 1, what="the disconnect")
        assert wait_for(lambda: srv.sockets_connected() == 0, timeout=5)
        e2 = srv.element(owner, room_id)
        e3 = srv.element(owner, room_id)
        away = srv.my_room(member, room_id)
        assert away["elementCount"] == 3
        assert away["badges"]["elements"] == 3, "created by the other member since the member last saw the room"
        assert away["hasUnread"] is True

        # What the server saw decides what coming back gives. python-socketio sends a DISCONNECT
        # and then closes its transport; over WebSocket it closes the socket before that packet
        # has left (its log: "packet queue is empty, aborting"), so the server sees a transport
        # close, which is recoverable (reference: RECOVERABLE_DISCONNECT_REASONS).
        first = [l for l in srv.lines if "socket disconnected" in l and f"sid={app.sids[0]}" in l]
        assert len(first) == 1, first
        said_bye = "reason=client namespace disconnect" in first[0]
        assert said_bye or "reason=transport close" in first[0], first[0]

        app.sio.connect(srv.base, auth=app.auth, transports=TRANSPORTS[transport], wait_timeout=10)  # back
        if recovery and not said_bye:
            # Recovered: same socket id and rooms, the missed events replayed, no room:join.
            app.wait(lambda a: len(a.sids) == 2 and len(a.created) == 3, what="recovered with the missed events")
            assert app.sids[1] == app.sids[0]
            assert app.in_offset_order() == [e1, e2, e3], app.created_seq
            assert app.joined == 1 and len(app.batches) == 1
            back = srv.my_room(member, room_id)
            assert back["elementCount"] == 3
            assert back["badges"]["elements"] == 3, "no room:join marked it seen"
            e4 = srv.element(owner, room_id)
            app.wait(lambda a: e4 in a.created, what="the next live event")
            assert app.in_offset_order() == [e1, e2, e3, e4], app.created_seq
        else:
            # A client namespace disconnect is not recoverable (nor is anything without recovery):
            # a fresh session, and the join's batch holds what was missed.
            app.wait(lambda a: a.joined == 2 and len(a.batches) == 2, what="room:join after coming back")
            assert app.sids[1] != app.sids[0]
            assert sorted(app.batches[1]) == sorted([e1, e2, e3])
            assert app.created == [e1], "nothing replayed: the batch is the state"
            back = srv.my_room(member, room_id)
            assert back["elementCount"] == 3
            assert back["badges"]["elements"] == 0 and back["hasUnread"] is False, "the join marks the room seen"
            e4 = srv.element(owner, room_id)
            app.wait(lambda a: a.created == [e1, e4], what="the next live event")
    finally:
        app.close()


# --- Engine.IO v3 clients (python-socketio 4.x in .venv-eio3) -------------------------------------

class EIO3App:
    """conformance/eio3/lifecycle_eio3.py in .venv-eio3: the same app over Engine.IO v3, reporting
    what it sees as JSON lines on stdout."""

    def __init__(self, base, user, room_id, transport):
        if not os.path.exists(EIO3_PYTHON):
            pytest.skip("no .venv-eio3 (python-socketio 4.x); scripts/test creates it from conformance/eio3/requirements.txt")
        self.proc = subprocess.Popen([EIO3_PYTHON, EIO3_CLIENT, base, user["token"], room_id, transport],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.cond = threading.Condition()
        self.events = []
        self.other = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            with self.cond:
                try:
                    self.events.append(json.loads(line))
                except ValueError:
                    self.other.append(line)
                self.cond.notify_all()

    def of(self, kind):
        return [e for e in self.events if e["event"] == kind]

    def wait(self, predicate, timeout=20, what="condition"):
        with self.cond:
            ok = self.cond.wait_for(lambda: predicate(self), timeout=timeout)
        assert ok, f"{what} within {timeout} s: {self.events} {''.join(self.other[-20:])}"

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@pytest.fixture
def eio3_srv():
    s = LifecycleServer(eio3=True)
    yield s
    ended(s)


@pytest.fixture
def eio3_srv_default_heartbeat():
    s = LifecycleServer(eio3=True, short_heartbeat=False)
    yield s
    ended(s)


@pytest.mark.parametrize("transport", RESTART_TRANSPORTS)
def test_eio3_client_reconnects_after_a_restart_and_gets_new_events(eio3_srv_default_heartbeat, transport):
    srv = eio3_srv_default_heartbeat
    owner, member, room_id = setup_room(srv)
    e0 = srv.element(owner, room_id)
    app = EIO3App(srv.base, member, room_id, transport)
    try:
        app.wait(lambda a: len(a.of("joined")) == 1 and len(a.of("batch")) == 1, what="first room:join")
        assert app.of("batch")[0]["ids"] == [e0]
        e1 = srv.element(owner, room_id)
        app.wait(lambda a: [e["id"] for e in a.of("created")] == [e1], what="live element:created")
        time.sleep(0.5)  # the next long-poll GET is parked on the server (see above)
        srv.restart()
        app.wait(lambda a: len(a.of("joined")) == 2 and len(a.of("batch")) == 2, timeout=12, what="reconnect and room:join after the restart")
        assert sorted(app.of("batch")[1]["ids"]) == sorted([e0, e1])
        e2 = srv.element(owner, room_id)
        app.wait(lambda a: [e["id"] for e in a.of("created")] == [e1, e2], what="the next element:created")
    finally:
        app.close()


def test_eio3_a_vanished_network_is_noticed_and_the_client_comes_back(eio3_srv):
    # Engine.IO v3: the client pings; the server closes a session that sent no ping for
    # pingInterval + pingTimeout.
    srv = eio3_srv
    owner, member, room_id = setup_room(srv)
    proxy = BlackholeProxy(srv.port)
    app = EIO3App(proxy.base, member, room_id, "websocket")
    try:
        app.wait(lambda a: len(a.of("joined")) == 1 and len(a.of("batch")) == 1, what="first room:join")
        proxy.vanish()
        vanished = time.time()
        assert wait_for(lambda: srv.disconnected("ping timeout"), timeout=10), "".join(srv.lines[-20:])
        budget = (PING_INTERVAL_MS + PING_TIMEOUT_MS) / 1000
        assert time.time() - vanished < budget + 1.0
        assert wait_for(lambda: srv.sockets_connected() == 0, timeout=5), "the socket is freed"
        e1 = srv.element(owner, room_id)
        proxy.restore()
        app.wait(lambda a: len(a.of("joined")) == 2 and len(a.of("batch")) == 2, timeout=30, what="reconnect and room:join")
        assert app.of("batch")[1]["ids"] == [e1]
    finally:
        app.close()
        proxy.close()
