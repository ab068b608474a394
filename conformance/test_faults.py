"""Fault injection in test mode (`POST /api/test/faults`, docs/test-mode.md "Faults"), observed by
a real client nobody here wrote: python-socketio (pinned in requirements.txt) over WebSocket.

Each disconnect reason is checked as the client reports it. python-socketio 5.18 / python-engineio
4.15 pass one reason for every transport loss ("transport error") and "server disconnect" for a
Socket.IO DISCONNECT, so the tests also read the Engine.IO client's own log, which names what
happened on the wire: end of stream (a FIN), "Connection reset by peer" (an RST), or "Server has
stopped communicating" (its ping timeout); and whether (and how soon) the client reconnects.
"""
import logging
import os
import tempfile
import threading
import time

import pytest
import requests
import socketio

from conftest import Server, database_args, start_serve, stop_serve

PING_INTERVAL_MS = 1000
PING_TIMEOUT_MS = 1000
FAULT_CAP_BYTES = 16384


@pytest.fixture(scope="module")
def server():
    tmp = tempfile.mkdtemp(prefix="touchsync-faults-")
    db_args, drop_db = database_args(tmp)
    proc, base, lines = start_serve(["--test-mode"] + db_args, {
        "TOUCHSYNC_AUTH_PASSWORD_ITERATIONS": "1000",
        "TOUCHSYNC_JWT_SECRET": "conformance-secret-0123456789abcdef",
        "TOUCHSYNC_LOG_LEVEL": "info",
        # Short heartbeats, so the ping-timeout fault ends within seconds.
        "TOUCHSYNC_REALTIME_PING_INTERVAL_MS": str(PING_INTERVAL_MS),
        "TOUCHSYNC_REALTIME_PING_TIMEOUT_MS": str(PING_TIMEOUT_MS),
        "TOUCHSYNC_REALTIME_FAULT_MAX_BUFFERED_BYTES": str(FAULT_CAP_BYTES),
    })
    assert base, "server did not start:\n" + "".join(lines)
    yield Server(proc, base, lines)
    stop_serve(proc, drop_db)


class LogLines(logging.Handler):
    """Keeps what the Engine.IO client logs (it names how the transport ended)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())

    def has(self, text):
        return any(text in l for l in self.lines)


class Client:
    """A python-socketio client over WebSocket that records events, connects and disconnects
    (with the reason python-socketio passes), and the Engine.IO client's log."""

    def __init__(self, server, user, reconnection=True, transports=("websocket",)):
        self.log = LogLines()
        eio_logger = logging.getLogger("faults-eio-" + user["id"])
        eio_logger.setLevel(logging.DEBUG)
        eio_logger.addHandler(self.log)
        eio_logger.propagate = False
        self.sio = socketio.Client(reconnection=reconnection, reconnection_delay=0.1, reconnection_delay_max=0.2,
                                   randomization_factor=0, engineio_logger=eio_logger)
        self.events, self.connects, self.disconnects = [], [], []
        self.lock = threading.RLock()  # `wait` holds it while its predicate calls `of`

        @self.sio.on("*")
        def any_event(event, *args):
            with self.lock:
                self.events.append((time.monotonic(), event, args[0] if args else None))

        @self.sio.event
        def connect():
            with self.lock:
                self.connects.append(time.monotonic())

        @self.sio.event
        def disconnect(reason=None):
            with self.lock:
                self.disconnects.append((time.monotonic(), reason))

        self.sio.connect(server.base, auth={"token": user["token"]}, transports=list(transports), wait_timeout=10)

    def join(self, room):
        assert self.sio.call("room:join", {"roomId": room}, timeout=5) is not None

    @property
    def eio_sid(self):
        return self.sio.eio.sid

    def of(self, name):
        with self.lock:
            return [(t, p) for (t, e, p) in self.events if e == name]

    def wait(self, predicate, timeout=8.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if predicate():
                    return True
            time.sleep(0.02)
        with self.lock:
            return predicate()

    def close(self):
        try:
            self.sio.disconnect()
        except Exception:
            pass


@pytest.fixture
def made():
    clients = []
    yield clients
    for c in clients:
        c.close()


def fault(server, body, status=200):
    r = requests.post(server.url("/api/test/faults"), json=body, headers={"X-TouchSync-Test": "1"})
    assert r.status_code == status, r.text
    return r.json()


def setup(server, made, reconnection=True, transports=("websocket",)):
    user = server.register("faults")
    room = server.room(user)
    c = Client(server, user, reconnection=reconnection, transports=transports)
    made.append(c)
    c.join(room)
    return user, room, c


# --- disconnect ----------------------------------------------------------------------------


def test_transport_close_ends_the_stream_cleanly_and_the_client_reconnects(server, made):
    user, _, c = setup(server, made)
    sid = c.eio_sid
    answer = fault(server, {"userId": user["id"], "action": "disconnect", "reason": "transport close"})
    assert answer["data"]["sessions"] == [sid]
    assert c.wait(lambda: c.disconnects), "the client saw no disconnect"
    assert c.disconnects[0][1] == "transport error"  # python-engineio 4.15's reason for any transport loss
    # End of stream, read as such: not a reset, not a timeout, not a close packet.
    assert c.log.has("WebSocket connection was closed"), c.log.lines
    assert not c.log.has("Connection reset"), c.log.lines
    assert not c.log.has("Server has stopped communicating"), c.log.lines
    assert c.wait(lambda: len(c.connects) == 2), "the client did not reconnect after a transport close"
    assert c.connects[1] - c.disconnects[0][0] < 3.0
    assert c.eio_sid != sid
    assert server.proc.poll() is None


def test_transport_error_is_a_reset_and_the_client_reconnects(server, made):
    user, _, c = setup(server, made)
    fault(server, {"sid": c.eio_sid, "action": "disconnect", "reason": "transport error"})
    assert c.wait(lambda: c.disconnects), "the client saw no disconnect"
    assert c.disconnects[0][1] == "transport error"
    assert c.log.has("Connection reset by peer"), c.log.lines
    assert c.wait(lambda: len(c.connects) == 2), "the client did not reconnect after a reset"


def test_transport_close_over_long_polling_fails_the_waiting_get_and_the_client_reconnects(server, made):
    user, _, c = setup(server, made, transports=("polling",))
    fault(server, {"userId": user["id"], "action": "disconnect", "reason": "transport close"})
    assert c.wait(lambda: c.disconnects), "the client saw no disconnect"
    assert c.disconnects[0][1] == "transport error"
    assert c.log.has("Unexpected status code 400 in server response"), c.log.lines
    assert c.wait(lambda: len(c.connects) == 2), "the client did not reconnect"


def test_ping_timeout_comes_from_the_clients_own_timer_then_it_reconnects(server, made):
    user, _, c = setup(server, made)
    started = time.monotonic()
    fault(server, {"userId": user["id"], "action": "disconnect", "reason": "ping timeout"})
    listed = requests.get(server.url("/api/test/faults")).json()["data"]["faults"]
    assert any(f["userId"] == user["id"] and f["silenced"] for f in listed), listed
    assert c.wait(lambda: c.disconnects, timeout=10), "the client never timed out"
    waited = c.disconnects[0][0] - started
    assert c.disconnects[0][1] == "transport error"
    assert c.log.has("Server has stopped communicating"), c.log.lines
    # No ping for pingInterval + pingTimeout (the client's socket timeout) since the last one it read.
    limit = (PING_INTERVAL_MS + PING_TIMEOUT_MS) / 1000
    assert limit - PING_INTERVAL_MS / 1000 - 0.2 <= waited <= limit + 1.0, waited
    assert c.wait(lambda: len(c.connects) == 2), "the client did not reconnect after its ping timeout"


def test_server_disconnect_is_a_socketio_disconnect_and_the_client_stays_away(server, made):
    user, _, c = setup(server, made)
    fault(server, {"userId": user["id"], "action": "hold"})  # a kick is not held behind a fault
    fault(server, {"userId": user["id"], "action": "disconnect", "reason": "server disconnect"})
    assert c.wait(lambda: c.disconnects), "the client saw no disconnect"
    assert c.disconnects[0][1] == "server disconnect"
    # python-socketio would reconnect after 0.1 s: give it ten times that.
    assert not c.wait(lambda: len(c.connects) > 1, timeout=1.0), "python-socketio must not reconnect after a server disconnect"
    assert not c.sio.connected
    r = requests.post(server.url("/api/test/faults"), json={"userId": user["id"], "action": "hold"}, headers={"X-TouchSync-Test": "1"})
    assert r.status_code == 404, r.text


# --- delay, drop, hold ---------------------------------------------------------------------


def test_delay_makes_events_arrive_that_late_in_order_and_pings_keep_flowing(server, made):
    user, room, c = setup(server, made)
    t0 = time.monotonic()
    server.element(user, room)
    assert c.wait(lambda: c.of("element:created"))
    undelayed = c.of("element:created")[0][0] - t0
    fault(server, {"userId": user["id"], "action": "delay", "milliseconds": 1500})
    sent, ids = [], []
    for _ in range(3):
        sent.append(time.monotonic())
        ids.append(server.element(user, room)["id"])
    assert c.wait(lambda: len(c.of("element:created")) == 4, timeout=10)
    got = c.of("element:created")[1:]
    assert [p["element"]["id"] for (_, p) in got] == ids, "delayed events must keep their order"
    for (arrived, _), s in zip(got, sent):
        assert arrived - s >= 1.45, (arrived - s, undelayed)
        assert arrived - s < 1.5 + undelayed + 2.0  # generous: a loaded CI machine
    # 1.5 s of delay is more than the 1 s pingInterval: the heartbeat is not delayed, so the
    # connection survived it.
    assert not c.disconnects


def test_drop_loses_the_next_n_matching_events_and_logs_them_dropped(server, made):
    user, room, c = setup(server, made)
    since = requests.get(server.url("/api/test/events?limit=1")).json()["data"]["lastSequence"]
    fault(server, {"userId": user["id"], "action": "drop", "events": ["element:created"], "count": 2})
    made_ids = [server.element(user, room)["id"] for _ in range(3)]
    assert c.wait(lambda: c.of("element:created"))
    assert not c.wait(lambda: len(c.of("element:created")) > 1, timeout=0.5), "a dropped event arrived"
    got = [p["element"]["id"] for (_, p) in c.of("element:created")]
    assert got == made_ids[2:], (got, made_ids)
    # Other events were not dropped: the global one of every element arrived.
    assert len(c.of("element:created:global")) == 3
    log = requests.get(server.url(f"/api/test/events?since={since}&event=element:created")).json()["data"]["events"]
    assert [e.get("dropped", False) for e in log] == [True, True, False], log
    assert log[0]["droppedSessions"] == [c.eio_sid]
    # Its count used up, the drop fault is gone.
    assert all(f["userId"] != user["id"] for f in requests.get(server.url("/api/test/faults")).json()["data"]["faults"])


@pytest.mark.parametrize("transport", ["websocket", "polling"])
def test_hold_queues_events_and_release_delivers_them_in_order(server, made, transport):
    user, room, c = setup(server, made, transports=(transport,))
    fault(server, {"userId": user["id"], "action": "hold"})
    made_ids = [server.element(user, room)["id"] for _ in range(4)]
    # Held for longer than pingInterval + pingTimeout: the heartbeat is not held, the socket lives.
    held_for = (PING_INTERVAL_MS + PING_TIMEOUT_MS) / 1000 + 0.5
    assert not c.wait(lambda: c.of("element:created") or c.disconnects, timeout=held_for), (c.events, c.disconnects)
    listed = [f for f in requests.get(server.url("/api/test/faults")).json()["data"]["faults"] if f["userId"] == user["id"]]
    assert listed and listed[0]["holding"] and listed[0]["queuedPackets"] >= 4, listed
    fault(server, {"userId": user["id"], "action": "release"})
    assert c.wait(lambda: len(c.of("element:created")) == 4)
    assert [p["element"]["id"] for (_, p) in c.of("element:created")] == made_ids


def test_clear_releases_everything_and_removes_every_fault(server, made):
    user, room, c = setup(server, made)
    fault(server, {"userId": user["id"], "action": "hold"})
    fault(server, {"userId": user["id"], "action": "delay", "milliseconds": 5000})
    server.element(user, room)
    answer = fault(server, {"action": "clear"})
    assert c.eio_sid in answer["data"]["sessions"]
    assert c.wait(lambda: c.of("element:created"), timeout=3), "clear must not wait for the delay"
    assert all(f["userId"] != user["id"] for f in requests.get(server.url("/api/test/faults")).json()["data"]["faults"])


def test_holding_past_the_cap_drops_the_socket_as_a_slow_consumer(server, made):
    user, room, c = setup(server, made, reconnection=False)
    fault(server, {"userId": user["id"], "action": "hold"})
    for _ in range(FAULT_CAP_BYTES // 4000 + 2):
        server.element(user, room, content="x" * 4000)
    assert c.wait(lambda: c.disconnects), "the socket was not dropped past realtime.faultMaxBufferedBytes"
    assert c.wait(lambda: any("faultMaxBufferedBytes" in l and "slow consumer" in l for l in server.log_lines)), server.log_lines[-20:]
