"""Transport limits and shutdown with real clients: a room of 20,000
elements loads over REST and over `room:join` with python-socketio although every answer is far
larger than the outbound bounds, while a client that stops reading is still dropped (and the
access log says so); and SIGINT with clients connected exits 0 at once, closing their transports as the reference does."""
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time

import pytest
import requests
import socketio
import websocket

from conftest import ROOT, wait_for

BIN = os.environ.get("TOUCHSYNC_BIN") or os.path.join(ROOT, ".build", "debug", "touchsync")
ENV = {
    "TOUCHSYNC_AUTH_PASSWORD_ITERATIONS": "1000",
    "TOUCHSYNC_JWT_SECRET": "transport-secret-0123456789abcdef",
    "TOUCHSYNC_LOG_LEVEL": "info",
    "TOUCHSYNC_DATABASE_SYNCHRONOUS": "NORMAL",
    # Bounds far below the answers, so only the backlog rule can let them through.
    "TOUCHSYNC_SERVER_MAX_OUTBOUND_BYTES_PER_CONNECTION": "1048576",
    "TOUCHSYNC_REALTIME_MAX_OUTBOUND_BYTES_PER_SOCKET": "262144",
    "TOUCHSYNC_SERVER_OUTBOUND_STALL_TIMEOUT_SECONDS": "2",
}
ELEMENTS = 20_000


def env(extra=None):
    e = dict(os.environ)
    e.update(ENV)
    e.update(extra or {})
    return e


def serve(db, extra_env=None):
    proc = subprocess.Popen([BIN, "serve", "--port", "0", "--database", db], cwd=ROOT, env=env(extra_env),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    deadline = time.time() + 60
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"TouchSync .* listening on (http://127\.0\.0\.1:\d+)", line)
        if m:
            def pump():
                for l in proc.stdout:
                    lines.append(l)
            threading.Thread(target=pump, daemon=True).start()
            return proc, m.group(1), lines
    proc.kill()
    raise AssertionError("server did not start:\n" + "".join(lines))


def stop(proc, sig=signal.SIGTERM, timeout=20):
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        return proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.fixture(scope="module")
def big():
    """A server on a database seeded (`touchsync bench-seed`) with a room of 20,000 elements."""
    tmp = tempfile.mkdtemp(prefix="touchsync-transport-")
    db = os.path.join(tmp, "db.sqlite")
    out = os.path.join(tmp, "ids")
    # The tests read only the join room: the benchmark's toggle room is left empty (seeding it too
    # would double the set-up's time and prove nothing here).
    seeded = subprocess.run([BIN, "bench-seed", "--database", db, "--users", "2", "--elements", str(ELEMENTS),
                             "--toggle-elements", "0", "--rooms", "0", "--posts", "0", "--out", out], cwd=ROOT, env=env(), capture_output=True, text=True, timeout=600)
    assert seeded.returncode == 0, seeded.stdout + seeded.stderr
    token = open(os.path.join(out, "tokens.txt")).read().split()[0]
    room = open(os.path.join(out, "join-room.txt")).read().strip()
    proc, base, lines = serve(db)
    yield {"base": base, "token": token, "room": room, "lines": lines}
    assert stop(proc) == 0


def access_lines(lines, path):
    return [l for l in list(lines) if f"GET {path} " in l]




def test_room_of_20000_elements_loads_over_rest(big):
    h = {"Authorization": "Bearer " + big["token"]}
    path = f"/api/rooms/{big['room']}/elements"
    r = requests.get(big["base"] + path, headers=h, timeout=60)
    assert r.status_code == 200
    assert len(r.content) > 1_048_576, "the answer is larger than server.maxOutboundBytesPerConnection"
    data = r.json()["data"]
    elements = data if isinstance(data, list) else data["elements"]
    assert len(elements) == ELEMENTS
    assert requests.get(big["base"] + f"/api/rooms/{big['room']}", headers=h, timeout=60).status_code == 200
    assert wait_for(lambda: access_lines(big["lines"], path))
    assert all("not delivered" not in l for l in access_lines(big["lines"], path))


@pytest.mark.parametrize("transports", [None, ["polling"], ["websocket"]], ids=["default", "polling", "websocket"])
def test_room_join_of_20000_elements_with_python_socketio(big, transports):
    # websocket-client checks every text frame's UTF-8 twice: once in pure Python (about 1 µs a byte,
    # so 10 s for this 10 MB frame on a quiet machine and minutes beside a loaded suite, while the
    # client's read thread answers no ping), and again when it decodes the frame with Python's own
    # strict codec. The option drops only the first; an invalid byte still fails the decode.
    client = socketio.Client(reconnection=False, websocket_extra_options={"skip_utf8_validation": True})
    batches = []
    client.on("elements:batch", lambda payload: batches.append(payload))
    kwargs = {"wait_timeout": 10}
    if transports:
        kwargs["transports"] = transports
    client.connect(big["base"], auth={"token": big["token"]}, **kwargs)
    try:
        # A debug build reading and encoding 20,000 elements takes seconds alone and a minute or more
        # beside a loaded suite: these deadlines bound a hang, not the speed (bench/ measures that).
        ack = client.call("room:join", {"roomId": big["room"]}, timeout=240)
        assert ack == {"roomId": big["room"], "elementCount": ELEMENTS}
        assert wait_for(lambda: batches, timeout=60)
        assert len(batches) == 1 and len(batches[0]["elements"]) == ELEMENTS
        assert client.connected, "the socket survives its own large answer"
    finally:
        client.disconnect()


def test_a_client_that_stops_reading_is_still_dropped_and_the_log_says_so(big):
    path = f"/api/rooms/{big['room']}/elements"
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", int(big["base"].rsplit(":", 1)[1])))
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {big['token']}\r\n\r\n".encode())
    # Never read: after server.outboundStallTimeoutSeconds (2 s here) without progress it is dropped.
    assert wait_for(lambda: any("not delivered (slow consumer)" in l for l in access_lines(big["lines"], path)), timeout=20), \
        "".join(big["lines"][-20:])
    assert any("dropped as a slow consumer" in l for l in big["lines"])
    s.settimeout(10)
    received = 0
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            received += len(chunk)
    except ConnectionResetError:
        pass
    s.close()
    assert received < 1_048_576 * 4, "the rest of the answer was not sent to a reader that stopped"

    # The same for a socket: a raw Socket.IO client that joins and never reads is disconnected.
    ws = websocket.create_connection(big["base"].replace("http", "ws") + "/socket.io/?EIO=4&transport=websocket",
                                     sockopt=[(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)], timeout=10)
    assert ws.recv().startswith("0{")
    ws.send('40{"token":"%s"}' % big["token"])
    assert ws.recv().startswith("40{")
    ws.send('421["room:join",{"roomId":"%s"}]' % big["room"])
    assert wait_for(lambda: any("socket disconnected" in l and "reason=slow consumer" in l for l in big["lines"]), timeout=20), \
        "".join(big["lines"][-20:])
    ws.close()


def test_sigint_with_connected_clients_exits_0_at_once_and_closes_transports_like_the_reference():
    """SIGINT with sockets connected does not wait for server.shutdownGraceSeconds (10 s), and sends
    what a reference server's process exit leaves: no Socket.IO DISCONNECT (clients would take it
    as a kick and not reconnect after a restart); a WebSocket Close frame with no status code
    (engine.io's `ws.close()`); a parked long-poll's connection closed without an answer (an
    Engine.IO `1` there makes python-engineio stay away for good)."""
    tmp = tempfile.mkdtemp(prefix="touchsync-stop-")
    proc, base, lines = serve(os.path.join(tmp, "db.sqlite"))
    try:
        r = requests.post(base + "/api/auth/register", json={"username": "stopper", "password": "password-123"})
        assert r.status_code == 201
        token = r.json()["data"]["token"]
        reasons = []
        upgraded = socketio.Client(reconnection=False)

        @upgraded.event
        def disconnect(*args):
            reasons.append(args[0] if args else "(no reason)")
        upgraded.connect(base, wait_timeout=10, auth={"token": token})
        raw = websocket.create_connection(base.replace("http", "ws") + "/socket.io/?EIO=4&transport=websocket", timeout=10)
        assert raw.recv().startswith("0{")
        raw.send('40{"token":"%s"}' % token)
        assert raw.recv().startswith("40{")
        # A raw long-poll session, connected, with its next GET parked on the server.
        poll_url = base + "/socket.io/?EIO=4&transport=polling"
        sid = json.loads(requests.get(poll_url, timeout=10).text[1:])["sid"]
        assert requests.post(poll_url + "&sid=" + sid, data='40{"token":"%s"}' % token, timeout=10).text == "ok"
        assert requests.get(poll_url + "&sid=" + sid, timeout=10).text.startswith("40{")
        parked = {}

        def park():
            try:
                parked["body"] = requests.get(poll_url + "&sid=" + sid, timeout=10).text
            except requests.ConnectionError as e:
                parked["error"] = e
        poller = threading.Thread(target=park)
        poller.start()
        keep_alive = requests.Session()
        assert keep_alive.get(base + "/health").status_code == 200  # an idle keep-alive connection stays open
        time.sleep(0.3)
        assert upgraded.transport() == "websocket" and poller.is_alive()

        start = time.time()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=15)
        elapsed = time.time() - start
        assert code == 0, "".join(lines)
        assert elapsed < 2, f"SIGINT took {elapsed:.2f} s with idle clients connected"

        frame = raw.recv_data_frame(True)[1]
        assert frame.opcode == websocket.ABNF.OPCODE_CLOSE, f"the first frame is the Close, not a DISCONNECT: {frame}"
        assert frame.data == b"", "a Close frame with no status code, as `ws.close()` sends"
        poller.join(timeout=10)
        assert "body" not in parked and "error" in parked, f"the parked poll gets no answer, its connection just closes: {parked}"
        assert wait_for(lambda: len(reasons) == 1, timeout=5), reasons
        # python-socketio's name for a DISCONNECT from the server (the JS client: "io server disconnect").
        assert reasons[0] != socketio.Client.reason.SERVER_DISCONNECT, reasons
        assert any("server shutting down" in l for l in lines), "".join(lines)
        upgraded.disconnect()
    finally:
        stop(proc)
