"""python-socketio reference peer for the fan-out scenarios (bench/README.md).

The same wire surface the fan-out tool uses, nothing more: Socket.IO `room:join` (ack
{roomId, elementCount}, no auth check), `POST /api/rooms/{room}/elements` (creates an element in
memory, emits `element:created` {element} to the room and `element:created:global` to everyone,
answers 201 {data: element}), `DELETE /api/rooms/{room}/elements`, `GET /health`.
Run: bench/.venv/bin/python bench/peer/peer.py --port 3901   (writes its data dir for the tool)

With `--database bench/.data/bench.sqlite` (a database seeded by `touchsync bench-seed`) it is also
the aiohttp + sqlite3 reference for `POST /api/mobile/posts/interaction-state`: the
same work as the server, written the plain way: verify the HS256 bearer token with the server's
generated secret (`<database>.jwtsecret`), read the user's token version, one SQL query for the
posts' like/save state (stdlib sqlite3, read-only), `json_response` in the mobile envelope.
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import sqlite3
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


db: sqlite3.Connection | None = None
secret = b""


def b64url(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def unauthorized():
    body = {"success": False, "message": "Invalid or expired token", "error": "Invalid or expired token", "code": "UNAUTHORIZED"}
    return web.json_response(body, status=401)


async def interaction_state(request):
    auth = request.headers.get("Authorization", "")
    if not auth.startswith("Bearer "):
        return unauthorized()
    try:
        header, payload, signature = auth[7:].strip().split(".")
        expected = hmac.new(secret, f"{header}.{payload}".encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(expected, b64url(signature)):
            return unauthorized()
        claims = json.loads(b64url(payload))
        if claims["exp"] < time.time():
            return unauthorized()
    except (ValueError, KeyError):
        return unauthorized()
    row = db.execute("SELECT id, token_version FROM users WHERE id = ?", (claims["sub"],)).fetchone()
    if row is None or row[1] != claims.get("ver", 0):
        return unauthorized()
    ids = list(dict.fromkeys((await request.json())["postIds"]))
    marks = ",".join("?" * len(ids))
    found = {r[0]: r for r in db.execute(
        "SELECT p.id, p.like_count, p.save_count,"
        " EXISTS(SELECT 1 FROM post_likes l WHERE l.post_id = p.id AND l.user_id = ?),"
        " EXISTS(SELECT 1 FROM post_saves s WHERE s.post_id = p.id AND s.user_id = ?)"
        f" FROM posts p WHERE p.id IN ({marks})", (row[0], row[0], *ids))}
    states = [{"postId": i, "isLiked": bool(found[i][3]), "isSaved": bool(found[i][4]), "likeCount": found[i][1],
               "saveCount": found[i][2]} for i in ids if i in found]
    data = {"interactions": states, "totalPosts": len(states), "totalLiked": sum(s["isLiked"] for s in states),
            "totalSaved": sum(s["isSaved"] for s in states)}
    return web.json_response({"success": True, "message": "Interaction states retrieved successfully", "data": data})


app.router.add_post("/api/rooms/{room}/elements", create_element)
app.router.add_delete("/api/rooms/{room}/elements", clear_elements)
app.router.add_get("/health", health)

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=3901)
    ap.add_argument("--data", default="bench/.data-peer")
    ap.add_argument("--database", help="a database seeded by `touchsync bench-seed`: serve interaction-state from it")
    args = ap.parse_args()
    if args.database:
        db = sqlite3.connect(f"file:{args.database}?mode=ro", uri=True, check_same_thread=False)
        with open(args.database + ".jwtsecret") as f:
            secret = f.read().strip().encode()
        app.router.add_post("/api/mobile/posts/interaction-state", interaction_state)
    os.makedirs(args.data, exist_ok=True)
    files = {"tokens": [f"peer-token-{i}" for i in range(1000)], "member-tokens": [f"peer-token-{i}" for i in range(100)], "toggle-room": ["peer-room"], "join-room": ["peer-join"],
             "fanout-room": ["peer-fanout"], "create-room": ["peer-create"]}
    for name, lines in files.items():
        with open(os.path.join(args.data, name + ".txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
    web.run_app(app, host="127.0.0.1", port=args.port, print=None, access_log=None)
