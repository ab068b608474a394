"""python-socketio reference peer for the fan-out scenarios (bench/README.md).

The same wire surface the fan-out tool uses, nothing more: Socket.IO `room:join` (ack
{roomId, elementCount}, no auth check), `POST /api/rooms/{room}/elements` (creates an element in
memory, emits `element:created` {element} to the room and `element:created:global` to everyone,
answers 201 {data: element}), `DELETE /api/rooms/{room}/elements`, `GET /health`.
Run: bench/.venv/bin/python bench/peer/peer.py --port 3901   (writes its data dir for the tool)
"""
import argparse
import os
import time
import uuid

import socketio
from aiohttp import web

sio = socketio.AsyncServer(async_mode="aiohttp", cors_allowed_origins="*")
app = web.Application()
sio.attach(app)
rooms: dict[str, list] = {}


@sio.event
async def connect(sid, environ, auth):
    return True


@sio.on("room:join")
async def room_join(sid, data):
    room_id = data["roomId"]
    await sio.enter_room(sid, room_id)
    elements = rooms.get(room_id, [])
    await sio.emit("elements:batch", {"roomId": room_id, "elements": elements}, to=sid)
    return {"roomId": room_id, "elementCount": len(elements)}


async def create_element(request):
    room_id = request.match_info["room"]
    body = await request.json()
    element = {"id": str(uuid.uuid4()), "roomId": room_id, "type": body.get("type"), "positionX": body.get("positionX"),
               "positionY": body.get("positionY"), "width": body.get("width"), "height": body.get("height"),
               "createdBy": "peer", "content": body.get("content"), "createdAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    rooms.setdefault(room_id, []).append(element)
    await sio.emit("element:created", {"element": element}, room=room_id)
    await sio.emit("element:created:global", {"roomId": room_id, "elementId": element["id"], "createdBy": "peer", "type": element["type"]})
    return web.json_response({"data": element}, status=201)


async def clear_elements(request):
    room_id = request.match_info["room"]
    n = len(rooms.pop(room_id, []))
    return web.json_response({"data": {"roomId": room_id, "deleted": n}})


async def health(request):
    return web.json_response({"status": "ok"})


app.router.add_post("/api/rooms/{room}/elements", create_element)
app.router.add_delete("/api/rooms/{room}/elements", clear_elements)
app.router.add_get("/health", health)

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=3901)
    ap.add_argument("--data", default="bench/.data-peer")
    args = ap.parse_args()
    os.makedirs(args.data, exist_ok=True)
    files = {"tokens": [f"peer-token-{i}" for i in range(1000)], "member-tokens": [f"peer-token-{i}" for i in range(100)], "toggle-room": ["peer-room"], "join-room": ["peer-join"],
             "fanout-room": ["peer-fanout"], "create-room": ["peer-create"]}
    for name, lines in files.items():
        with open(os.path.join(args.data, name + ".txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
    web.run_app(app, host="127.0.0.1", port=args.port, print=None, access_log=None)
