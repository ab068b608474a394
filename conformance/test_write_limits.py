"""Per-user write limits (limits.*) through python-socketio, a client nobody here wrote: past a
user's burst an event's ack is the error RATE_LIMITED and nothing is written or broadcast, while
another user in the same room keeps writing; REST and Socket.IO spend the same budget.
The REST side (429, Retry-After) is also checked in Tests/TSAppTests/WriteLimitsAPITests.swift.
"""
import pytest
import requests
import socketio

from conftest import start_own_server, stop_own_server


@pytest.fixture(scope="module")
def limited():
    server = start_own_server({
        "TOUCHSYNC_LIMITS_ELEMENT_WRITES_PER_SECOND": "1",
        "TOUCHSYNC_LIMITS_ELEMENT_WRITES_BURST": "4",
        "TOUCHSYNC_LIMITS_REACTION_TOGGLES_PER_SECOND": "1",
        "TOUCHSYNC_LIMITS_REACTION_TOGGLES_BURST": "2",
    })
    yield server
    stop_own_server(server)


def connect(server, user):
    c = socketio.Client(reconnection=False)
    c.connect(server.base, auth={"token": user["token"]}, wait_timeout=10)
    return c


NOTE = {"type": "note", "positionX": 1, "positionY": 2, "width": 10, "height": 10}


def create_until_refused(client, room, limit=30):
    """Emits element:create with an ack until one is refused: (acks that succeeded, the refusal)."""
    ok = []
    for _ in range(limit):
        ack = client.call("element:create", dict(NOTE, roomId=room), timeout=5)
        if "error" in ack:
            return ok, ack
        ok.append(ack["element"]["id"])
    return ok, None


def test_socketio_ack_is_rate_limited_and_others_are_unaffected(limited):
    alice, bob = limited.register("alice"), limited.register("bob")
    room = limited.room(alice, [bob])
    ca, cb = connect(limited, alice), connect(limited, bob)
    try:
        created, refused = create_until_refused(ca, room)
        assert refused is not None, "the limit never refused"
        assert 4 <= len(created) < 30, created
        assert refused["error"]["code"] == "RATE_LIMITED", refused
        assert "element writes" in refused["error"]["message"], refused
        # Nothing was written for the refused event.
        listed = requests.get(limited.url(f"/api/rooms/{room}/elements"), headers=limited.auth(bob)).json()["data"]
        assert sorted(e["id"] for e in listed) == sorted(created)
        # REST spends the same budget: refused there too, with Retry-After.
        r = requests.post(limited.url(f"/api/rooms/{room}/elements"), json=NOTE, headers=limited.auth(alice))
        assert r.status_code == 429 and r.json()["error"]["code"] == "RATE_LIMITED", r.text
        assert int(r.headers["Retry-After"]) >= 1
        # Bob, in the same room at the same moment, has his own budget.
        for _ in range(4):
            ack = cb.call("element:create", dict(NOTE, roomId=room), timeout=5)
            assert "element" in ack, ack
        # The socket that was refused is still connected and can do what is not limited.
        assert ca.call("room:join", {"roomId": room}, timeout=5)["roomId"] == room
    finally:
        ca.disconnect()
        cb.disconnect()


def test_reaction_toggle_ack_is_rate_limited(limited):
    carol = limited.register("carol")
    room = limited.room(carol)
    element = limited.element(carol, room)["id"]
    c = connect(limited, carol)
    try:
        acks = [c.call("element:reaction:toggle", {"roomId": room, "elementId": element}, timeout=5) for _ in range(12)]
        refused = [a for a in acks if "error" in a]
        assert refused, acks
        assert all(a["error"]["code"] == "RATE_LIMITED" for a in refused), refused
        assert "error" not in acks[0] and "error" not in acks[1], "the burst of 2 is served"
    finally:
        c.disconnect()
    assert any("reaction toggles limit" in l for l in limited.log_lines), "the refusal is logged"
