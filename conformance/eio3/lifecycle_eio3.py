"""The app of conformance/test_lifecycle.py over Engine.IO v3 / Socket.IO v4 protocol: python-socketio
4.x with its default reconnection, `room:join` in its connect handler. Run with the .venv-eio3
interpreter:

    lifecycle_eio3.py BASE_URL TOKEN ROOM_ID TRANSPORT

Prints one JSON object per line for what it sees (connect, joined, batch, created, disconnect)
until it reads `quit` on stdin.
"""
import json
import sys
import threading

import socketio

base, token, room_id, transport = sys.argv[1:5]
lock = threading.Lock()


def report(**fields):
    with lock:
        print(json.dumps(fields), flush=True)


sio = socketio.Client()


@sio.event
def connect():
    report(event="connect", sid=sio.sid)
    sio.emit("room:join", {"roomId": room_id}, callback=lambda *ack: report(event="joined"))


@sio.event
def disconnect():
    report(event="disconnect")


@sio.on("elements:batch")
def on_batch(data):
    report(event="batch", ids=[e["id"] for e in data["elements"]])


@sio.on("element:created")
def on_created(data):
    report(event="created", id=data["element"]["id"])


# Query-string auth: Socket.IO v4 protocol clients have no CONNECT auth payload.
sio.connect(f"{base}?token={token}", transports=None if transport == "default" else [transport])
for line in sys.stdin:
    if line.strip() == "quit":
        break
sio.disconnect()
