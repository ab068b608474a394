"""Drives python-socketio 4.x (Socket.IO v4 protocol over Engine.IO v3) against a running
touchsync with realtime.allowEIO3 on. Run with the .venv-eio3 interpreter by test_eio3.py:

    client_eio3.py BASE_URL TOKEN_A TOKEN_B ROOM_ID TRANSPORTS

TRANSPORTS is "polling", "websocket" or "polling,websocket" (the default upgrade path).
Prints one JSON object with what happened; exits 0 when it got that far.
"""
import json
import sys
import threading
import time

import engineio
import socketio

base, token_a, token_b, room_id, transports = sys.argv[1:6]
transports = transports.split(",")
out = {"engineio": engineio.__version__, "socketio": socketio.__version__}

created = threading.Event()
got = {}

a = socketio.Client(reconnection=False)
b = socketio.Client(reconnection=False)


@b.on("element:created")
def on_created(data):
    got["element:created"] = data
    created.set()


# Query-string auth: Socket.IO v4 protocol clients have no CONNECT auth payload.
a.connect(f"{base}?token={token_a}", transports=transports)
b.connect(f"{base}?token={token_b}", transports=transports)
out["connected"] = [a.connected, b.connected]
out["transport"] = [a.transport(), b.transport()]
out["join_a"] = a.call("room:join", {"roomId": room_id}, timeout=10)
out["join_b"] = b.call("room:join", {"roomId": room_id}, timeout=10)
out["create_ack"] = a.call("element:create", {"roomId": room_id, "type": "note", "positionX": 1, "positionY": 2,
                                              "width": 100, "height": 50, "content": "héllo ✓ 😀"}, timeout=10)
out["broadcast_received"] = created.wait(10)
out["broadcast"] = got.get("element:created")
# Stay past pingInterval + pingTimeout: the client pings and the server must answer.
time.sleep(float(sys.argv[6]) if len(sys.argv) > 6 else 0)
out["still_connected"] = [a.connected, b.connected]
out["sid_a"] = a.sid
a.disconnect()
b.disconnect()
print(json.dumps(out))
