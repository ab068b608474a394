"""Account deletion watched by another member through python-socketio (a client nobody here
wrote): while Alice deletes her account (and her other device keeps creating elements), Bob's
client sees her heart leave his element and each of her elements leave the room, and the counts
he can rebuild from those events are the server's."""
import threading

import requests

from test_realtime import Recorder
from conftest import wait_for as wait_until


def test_other_members_follow_a_deletion_with_a_racing_device(server):
    alice = server.register("alice")
    bob = server.register("bob")
    carol = server.register("carol")
    room = server.room(alice, [bob, carol])
    mine = [server.element(alice, room)["id"] for _ in range(2)]
    b1 = server.element(bob, room)["id"]
    for user in (alice, carol):
        r = requests.post(server.url(f"/api/rooms/{room}/elements/{b1}/reactions/toggle"), headers=server.auth(user))
        assert r.status_code == 200, r.text
    phone = requests.post(server.url("/api/auth/login"), json={"username": alice["username"], "password": "password-123"}).json()["data"]["token"]

    watcher = Recorder().connect(server, auth={"token": bob["token"]})
    alice_socket = Recorder().connect(server, auth={"token": phone})
    try:
        watcher.client.call("room:join", {"roomId": room}, timeout=5)
        start = requests.get(server.url(f"/api/rooms/{room}"), headers=server.auth(bob)).json()["data"]["elementCount"]
        assert start == 3

        # Alice's phone creates elements until the deletion refuses it.
        statuses = []

        def racing_writes():
            while len(statuses) < 300:
                r = requests.post(server.url(f"/api/rooms/{room}/elements"), headers={"Authorization": "Bearer " + phone},
                                  json={"type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1})
                statuses.append(r.status_code)
                if r.status_code != 201:
                    return
        writer = threading.Thread(target=racing_writes)
        writer.start()
        assert wait_until(lambda: statuses.count(201) >= 3), statuses
        r = requests.delete(server.url("/api/auth/me"), json={"password": "password-123"}, headers=server.auth(alice))
        assert r.status_code == 200, r.text
        writer.join(timeout=30)
        assert statuses[-1] in (401, 403, 404, 409), statuses[-5:]  # 409: PostgreSQL, a write under way when the deletion committed

        # Her socket got a server disconnect; her tokens are refused everywhere.
        assert wait_until(lambda: not alice_socket.client.connected), "the deleted user's socket is disconnected"
        for token in (alice["token"], phone):
            assert requests.get(server.url("/api/auth/me"), headers={"Authorization": "Bearer " + token}).status_code == 401
            assert requests.get(server.url("/api/auth/me/export"), headers={"Authorization": "Bearer " + token}).status_code == 401

        # Bob's view from events: her heart left his element with the new stats ...
        removed = watcher.wait_for("element:reaction:removed")
        assert len(removed) == 1, removed
        assert removed[0]["elementId"] == b1 and removed[0]["userId"] == alice["id"]
        assert removed[0]["stats"]["totalReactions"] == 1 and removed[0]["stats"]["hasReacted"] is False
        assert [u["id"] for u in removed[0]["stats"]["topReactors"]] == [carol["id"]]

        # ... and every element of hers he saw (before or during the race) was deleted.
        server_count = requests.get(server.url(f"/api/rooms/{room}"), headers=server.auth(bob)).json()["data"]["elementCount"]
        assert server_count == 1

        def from_events():
            created = {p["element"]["id"] for p in watcher.of("element:created")}
            deleted = {p["elementId"] for p in watcher.of("element:deleted")}
            return created, deleted
        assert wait_until(lambda: start + len(from_events()[0]) - len(from_events()[1]) == server_count)
        created, deleted = from_events()
        assert set(mine) <= deleted and created <= deleted, (created - deleted)
        # Replayed in the order Bob got them, the events leave him exactly the server's elements.
        with watcher.lock:
            ordered = [(e, p) for (e, p) in watcher.events if e in ("element:created", "element:deleted")]
        present = set()
        for name, payload in ordered:
            if name == "element:created":
                present.add(payload["element"]["id"])
            else:
                present.discard(payload["elementId"])
        assert present == set(), ordered
        # Each element:deleted:global leaves in the same write as its element:deleted (one
        # emission, RealtimeBroadcaster.broadcast), but as a second Engine.IO packet: the client may
        # have read the first and not yet the second when the wait above ends.
        assert wait_until(lambda: {p["elementId"] for p in watcher.of("element:deleted:global")} == deleted), \
            (deleted - {p["elementId"] for p in watcher.of("element:deleted:global")})
        assert all(p["deletedBy"] == alice["id"] for p in watcher.of("element:deleted:global"))

        elements = requests.get(server.url(f"/api/rooms/{room}/elements"), headers=server.auth(bob)).json()["data"]
        assert [e["id"] for e in elements] == [b1]
        assert elements[0]["reactions"]["count"] == 1 and elements[0]["reactions"]["hasReacted"] is False
    finally:
        watcher.close()
        alice_socket.close()
