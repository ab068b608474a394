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
posts' like/save state (stdlib sqlite3), `json_response` in the mobile envelope. Likewise
`GET /api/rooms/my-rooms` (the caller's rooms with the server's own SELECT, sorted by activity, in
the `{data: [...]}` envelope) and `POST /api/rooms/{room}/elements/{element}/reactions/toggle`:
one transaction per request on a `synchronous = FULL` connection (as the server runs in bench/,
a 2xx survives a power cut), the same statements the server's toggle runs (element and
membership, delete or insert the heart, count ± 1, the owner's notification, the top three
reactors), answered `{data: {action, reaction, elementStats}}`. The peer commits each toggle on
its own (no group commit) and publishes no realtime event: the plain way to write it.
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


started = time.monotonic()


async def health(request):
    # The fields of TouchSync's /health (bench/run-compare.sh compares the two).
    return web.json_response({"status": "ok", "version": "0.1.0", "uptimeSeconds": int(time.monotonic() - started), "database": "ok"})


db: sqlite3.Connection | None = None      # reads
writer: sqlite3.Connection | None = None  # the toggle's transactions
secret = b""


def b64url(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def unauthorized():
    body = {"success": False, "message": "Invalid or expired token", "error": "Invalid or expired token", "code": "UNAUTHORIZED"}
    return web.json_response(body, status=401)


def error(status, code, message):
    return web.json_response({"error": {"code": code, "message": message}}, status=status)


def verified_claims(request):
    """The bearer token's claims when its HS256 signature and expiry check out, else None."""
    auth = request.headers.get("Authorization", "")
    if not auth.startswith("Bearer "):
        return None
    try:
        header, payload, signature = auth[7:].strip().split(".")
        expected = hmac.new(secret, f"{header}.{payload}".encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(expected, b64url(signature)):
            return None
        claims = json.loads(b64url(payload))
        return claims if claims["exp"] >= time.time() else None
    except (ValueError, KeyError):
        return None


USER = "SELECT id, username, first_name, avatar_url, token_version FROM users WHERE id = ?"


def session_user(conn, claims):
    """The token's user row (id, username, first_name, avatar_url) when its version matches, else None."""
    row = conn.execute(USER, (claims["sub"],)).fetchone()
    return row[:4] if row is not None and row[4] == claims.get("ver", 0) else None


def iso(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def public_user(row, at=0):
    return {"id": row[at], "username": row[at + 1], "firstName": row[at + 2], "avatarUrl": row[at + 3]}


async def interaction_state(request):
    claims = verified_claims(request)
    if claims is None:
        return unauthorized()
    row = session_user(db, claims)
    if row is None:
        return unauthorized()
    ids = list(dict.fromkeys((await request.json())["postIds"]))
    marks = ",".join("?" * len(ids))
    found = {r[0]: r for r in db.execute(
        "SELECT p.id, p.like_count, p.save_count, i.liked_at IS NOT NULL, i.saved_at IS NOT NULL"
        " FROM posts p LEFT JOIN post_interactions i ON i.post_id = p.id AND i.user_id = ?"
        f" WHERE p.id IN ({marks})", (row[0], *ids))}
    states = [{"postId": i, "isLiked": bool(found[i][3]), "isSaved": bool(found[i][4]), "likeCount": found[i][1],
               "saveCount": found[i][2]} for i in ids if i in found]
    data = {"interactions": states, "totalPosts": len(states), "totalLiked": sum(s["isLiked"] for s in states),
            "totalSaved": sum(s["isSaved"] for s in states)}
    return web.json_response({"success": True, "message": "Interaction states retrieved successfully", "data": data})


# The server's room SELECT (Sources/TSDomain/Services/Readers.swift, roomSelect), sorted by SQL here.
MY_ROOMS = """
SELECT r.id, r.name, r.created_by, r.created_at, r.updated_at, r.is_active, r.name_set_by,
       u.id, u.username, u.first_name, u.avatar_url, r.element_count, m.unseen_elements, m.unread_messages
FROM room_members m JOIN rooms r ON r.id = m.room_id LEFT JOIN users u ON u.id = r.name_set_by
WHERE m.user_id = ? ORDER BY r.last_activity_at DESC, r.activity_seq DESC
"""


async def my_rooms(request):
    claims = verified_claims(request)
    user = session_user(db, claims) if claims is not None else None
    if user is None:
        return error(401, "UNAUTHORIZED", "Invalid or expired token")
    rooms_out = [{"id": r[0], "name": r[1], "createdBy": r[2], "createdAt": iso(r[3]), "updatedAt": iso(r[4]), "isActive": bool(r[5]),
                  "nameSetBy": r[6], "nameSetByUser": public_user(r, 7) if r[7] is not None else None, "elementCount": r[11],
                  "badges": {"messages": r[13], "elements": r[12]}, "hasUnread": r[12] > 0 or r[13] > 0}
                 for r in db.execute(MY_ROOMS, (user[0],))]
    return web.json_response({"data": rooms_out})


last_seq = 0


def next_seq():
    """Microseconds of the wall clock, strictly increasing (the server's SequenceSource)."""
    global last_seq
    now = time.time_ns() // 1000
    last_seq = now if now > last_seq else last_seq + 1
    return last_seq


TOP_REACTORS = """
SELECT u.id, u.username, u.first_name, u.avatar_url FROM reactions r JOIN users u ON u.id = r.user_id
WHERE r.element_id = ? ORDER BY r.seq DESC, r.user_id DESC LIMIT 3
"""


def toggle_in_transaction(claims, room_id, element_id):
    """The toggle's statements (ReactionService.toggle): a response, or an error response."""
    now, seq = int(time.time()), next_seq()
    user = session_user(writer, claims)
    if user is None:
        return error(401, "UNAUTHORIZED", "Invalid or expired token")
    actor = user[0]
    owner = writer.execute("SELECT e.created_by FROM elements e WHERE e.id = ? AND e.room_id = ?"
                           " AND EXISTS(SELECT 1 FROM room_members m WHERE m.room_id = e.room_id AND m.user_id = ?)",
                           (element_id, room_id, actor)).fetchall()
    if not owner:
        return error(404, "NOT_FOUND", "Element not found")
    gone = writer.execute("DELETE FROM reactions WHERE element_id = ? AND user_id = ? AND type = 'heart' RETURNING id, created_at",
                          (element_id, actor)).fetchall()
    if gone:
        action, reaction_id, created_at, delta = "removed", gone[0][0], gone[0][1], -1
    else:
        action, reaction_id, created_at, delta = "added", str(uuid.uuid4()), now, 1
        writer.execute("INSERT INTO reactions (element_id, user_id, type, id, seq, created_at) VALUES (?, ?, 'heart', ?, ?, ?)",
                       (element_id, actor, reaction_id, seq, now))
    count = writer.execute("UPDATE elements SET reaction_count = reaction_count + ? WHERE id = ? RETURNING reaction_count",
                           (delta, element_id)).fetchall()[0][0]
    if action == "added" and owner[0][0] != actor:
        writer.execute("INSERT INTO notifications (id, user_id, type, room_id, element_id, actor_id, created_at)"
                       " VALUES (?, ?, 'element_reaction', ?, ?, ?, ?)", (str(uuid.uuid4()), owner[0][0], room_id, element_id, actor, now))
    top = [public_user(r) for r in writer.execute(TOP_REACTORS, (element_id,))] if count > 0 else []
    reaction = {"id": reaction_id, "elementId": element_id, "userId": actor, "type": "heart", "createdAt": iso(created_at), "user": public_user(user)}
    stats = {"totalReactions": count, "count": count, "hasReacted": action == "added", "userReaction": "heart" if action == "added" else None,
             "topReactors": top}
    return web.json_response({"data": {"action": action, "reaction": reaction, "elementStats": stats}})


async def toggle(request):
    claims = verified_claims(request)
    if claims is None:
        return error(401, "UNAUTHORIZED", "Invalid or expired token")
    # One transaction per toggle, committed (fsync: synchronous = FULL) before the answer.
    writer.execute("BEGIN IMMEDIATE")
    try:
        response = toggle_in_transaction(claims, request.match_info["room"], request.match_info["element"])
    except BaseException:
        writer.execute("ROLLBACK")
        raise
    writer.execute("COMMIT")
    return response


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
        # Transactions by hand (BEGIN IMMEDIATE … COMMIT), durable at commit like the server's FULL.
        writer = sqlite3.connect(args.database, isolation_level=None, check_same_thread=False)
        for pragma in ("journal_mode = WAL", "synchronous = FULL", "foreign_keys = ON", "busy_timeout = 5000"):
            writer.execute("PRAGMA " + pragma)
        with open(args.database + ".jwtsecret") as f:
            secret = f.read().strip().encode()
        app.router.add_post("/api/mobile/posts/interaction-state", interaction_state)
        app.router.add_get("/api/rooms/my-rooms", my_rooms)
        app.router.add_post("/api/rooms/{room}/elements/{element}/reactions/toggle", toggle)
    os.makedirs(args.data, exist_ok=True)
    files = {"tokens": [f"peer-token-{i}" for i in range(1000)], "member-tokens": [f"peer-token-{i}" for i in range(100)], "toggle-room": ["peer-room"], "join-room": ["peer-join"],
             "fanout-room": ["peer-fanout"], "create-room": ["peer-create"]}
    for name, lines in files.items():
        with open(os.path.join(args.data, name + ".txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
    web.run_app(app, host="127.0.0.1", port=args.port, print=None, access_log=None)
