"""The requests Socket.IO-Client-Swift (16.x, Engine.IO v4) sends, byte for byte, against a real
`touchsync serve`.

Socket.IO-Client-Swift has no Linux build, so its own code cannot run here (examples/socketio-client-swift
runs it on macOS). What it puts on the wire is plain to read in its source (Source/SocketIO/Engine/
SocketEngine.swift, SocketEngineSpec.swift, SocketEnginePollable.swift) and is replayed here:
- the polling URL is `/socket.io/?transport=polling&b64=1&EIO=4` (its own query order, `b64=1`
  always, connect params before `EIO`), then the same with `&sid=<sid>` appended;
- a POST body is the packets joined by the record separator U+001E (Engine.IO v4 protocol,
  "Payload") with `Content-Type: text/plain; charset=UTF-8`;
- the WebSocket URL is `/socket.io/?transport=websocket&EIO=4&sid=<sid>`, probed with `2probe`, and
  the upgrade completed with `5` (Engine.IO v4 protocol, "Upgrade");
- `connect(withPayload:)` sends the Socket.IO CONNECT `40{…}` with the token in the payload.
The app then joins a room with an ack and listens for `element:reaction:added`.
"""
import json
import uuid

import requests
import websocket

RS = "\x1e"


def register(server, name):
    r = requests.post(server.url("/api/auth/register"),
                      json={"username": name, "password": "password-123", "firstName": name}, timeout=10)
    assert r.status_code == 201, r.text
    d = r.json()["data"]
    return d["user"]["id"], d["token"]


def test_socket_io_client_swift_polling_b64_then_upgrade_join_and_hearts(server):
    suffix = uuid.uuid4().hex[:8]
    a_id, a_token = register(server, "swifta_" + suffix)
    b_id, b_token = register(server, "swiftb_" + suffix)
    auth = {"Authorization": "Bearer " + b_token}
    room = requests.post(server.url("/api/rooms"), json={"name": "Design Team", "memberIds": [a_id]}, headers=auth, timeout=10)
    assert room.status_code == 201, room.text
    room_id = room.json()["data"]["id"]
    element = requests.post(server.url(f"/api/rooms/{room_id}/elements"), headers=auth, timeout=10,
                            json={"type": "note", "positionX": 1, "positionY": 2, "width": 100, "height": 50, "content": "hi"})
    assert element.status_code == 201, element.text
    element_id = element.json()["data"]["id"]

    # The open packet: `0{…}` with the session, answered to the client's own query.
    http = requests.Session()
    polling = server.url("/socket.io/?transport=polling&b64=1&EIO=4")
    opened = http.get(polling, timeout=10)
    assert opened.status_code == 200 and opened.text.startswith("0{"), opened.text
    handshake = json.loads(opened.text[1:])
    assert "websocket" in handshake["upgrades"], handshake
    sid = handshake["sid"]
    with_sid = polling + "&sid=" + sid

    # CONNECT with the token, in a POST as the client sends it (one packet here; joined by U+001E when several).
    posted = http.post(with_sid, data=("40" + json.dumps({"token": a_token})).encode(),
                       headers={"Content-Type": "text/plain; charset=UTF-8"}, timeout=10)
    assert posted.status_code == 200 and posted.text == "ok", posted.text
    connected = http.get(with_sid, timeout=10).text.split(RS)
    assert connected[0].startswith("40{") and "sid" in json.loads(connected[0][2:]), connected

    # The upgrade, with the client's WebSocket query.
    ws = websocket.create_connection(server.url(f"/socket.io/?transport=websocket&EIO=4&sid={sid}").replace("http", "ws", 1), timeout=10)
    try:
        ws.send("2probe")
        assert ws.recv() == "3probe"
        ws.send("5")

        # room:join with an ack (id 0): the batch, then the ack; server pings (`2`) may come between.
        ws.send('420' + json.dumps(["room:join", {"roomId": room_id}]))
        batch = ack = None
        while ack is None:
            frame = ws.recv()
            if frame == "2":
                ws.send("3")
            elif frame.startswith("42"):
                name, payload = json.loads(frame[2:])[:2]
                if name == "elements:batch":
                    batch = payload
            elif frame.startswith("430"):
                ack = json.loads(frame[3:])
        assert batch is not None and [e["id"] for e in batch["elements"]] == [element_id], batch
        assert ack[0]["roomId"] == room_id, ack

        # Another member hearts the element: the app's listener gets element:reaction:added.
        heart = requests.post(server.url(f"/api/rooms/{room_id}/elements/{element_id}/reactions/toggle"), headers=auth, timeout=10)
        assert heart.status_code in (200, 201), heart.text
        while True:
            frame = ws.recv()
            if frame == "2":
                ws.send("3")
                continue
            if frame.startswith("42"):
                name, payload = json.loads(frame[2:])[:2]
                if name == "element:reaction:added":
                    break
        assert payload["elementId"] == element_id and payload["roomId"] == room_id, payload
    finally:
        ws.close()
