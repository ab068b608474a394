"""Per-user write limits (limits.*) through python-socketio, a client nobody here wrote: past a
user's burst an event's ack is the error RATE_LIMITED and nothing is written or broadcast, while
another user in the same room keeps writing; REST and Socket.IO spend the same budget.
The REST side (429, Retry-After) is also checked in Tests/TSAppTests/WriteLimitsAPITests.swift.
"""
import math
import time

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


@pytest.fixture(scope="module")
def markers():
    server = start_own_server({
        "TOUCHSYNC_LIMITS_READ_MARKERS_PER_SECOND": "1",
        "TOUCHSYNC_LIMITS_READ_MARKERS_BURST": "3",
    })
    yield server
    stop_own_server(server)


def test_room_join_counts_as_a_seen_marker(markers):
    """room:join marks the room's elements seen (a write): past the read-marker budget its ack is
    RATE_LIMITED, REST's seen marker shares the budget, and the socket stays usable."""
    dora = markers.register("dora")
    room = markers.room(dora)
    c = connect(markers, dora)
    try:
        acks = [c.call("room:join", {"roomId": room}, timeout=5) for _ in range(8)]
        assert all("error" not in a for a in acks[:3]), acks
        refused = [a for a in acks if "error" in a]
        assert refused and all(a["error"]["code"] == "RATE_LIMITED" for a in refused), acks
        assert "seen and read markers" in refused[0]["error"]["message"]
        r = requests.post(markers.url(f"/api/rooms/{room}/seen"), headers=markers.auth(dora))
        assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1, r.text
        assert c.call("room:leave", {"roomId": room}, timeout=5) == {"roomId": room}
    finally:
        c.disconnect()


@pytest.fixture()
def sign_ups():
    # The defaults (100 an hour, 50 in a row), which the suite's other servers turn off.
    server = start_own_server({"TOUCHSYNC_LIMITS_SIGN_UPS_PER_HOUR": "100"})
    yield server
    stop_own_server(server)


def test_one_address_cannot_create_a_hundred_accounts_in_seconds(sign_ups):
    """131 sign-ups as fast as requests sends them from one address: the burst (50) is created, the
    rest get 429 with a Retry-After of at most 36 s (100 an hour), and nothing is created for them.
    The bucket refills from the first sign-up on, so the last refusal's Retry-After is 36 s less the
    time the run has taken (on a loaded machine the 50 password hashes alone take seconds)."""
    statuses, refused = [], None
    started = time.monotonic()
    for i in range(131):
        r = requests.post(sign_ups.url("/api/auth/register"), json={"username": f"bulk_{i}", "password": "password-123"})
        statuses.append(r.status_code)
        if r.status_code == 429:
            refused = r
    elapsed = time.monotonic() - started
    created = statuses.count(201)
    assert 50 <= created <= 51 and statuses.count(429) == 131 - created, statuses
    assert refused.json()["error"]["code"] == "RATE_LIMITED", refused.text
    assert "sign-ups from this address" in refused.json()["error"]["message"], refused.text
    assert max(1, math.floor(36 - elapsed)) <= int(refused.headers["Retry-After"]) <= 36, (elapsed, refused.headers)
    # The last one was refused: no such account exists (its login fails like any unknown name).
    login = requests.post(sign_ups.url("/api/auth/login"), json={"username": "bulk_130", "password": "password-123"})
    assert login.status_code == 401, login.text
    assert any("is over the sign-ups limit" in l and "limits.signUpsPerHour" in l for l in sign_ups.log_lines), "the refusal is logged"


def test_test_mode_starts_without_limits_and_a_test_turns_them_on():
    """--test-mode: 600 elements as one user are all accepted (an app's set-up is a burst); after
    POST /api/test/limits {"enabled": true} the configured limits apply; a reset turns them off."""
    server = start_own_server({"TOUCHSYNC_LIMITS_POSTS_BURST": "5"}, args=["--test-mode"])
    try:
        erin = server.register("erin")
        room = server.room(erin)
        for i in range(600):
            r = requests.post(server.url(f"/api/rooms/{room}/elements"), json=NOTE, headers=server.auth(erin))
            assert r.status_code == 201, (i, r.text)
        on = requests.post(server.url("/api/test/limits"), json={"enabled": True}, headers={"X-TouchSync-Test": "1"})
        assert on.status_code == 200 and on.json() == {"data": {"enabled": True}}, on.text
        codes = [requests.post(server.url("/api/mobile/posts"), json={"content": "p"}, headers=server.auth(erin)).status_code
                 for _ in range(12)]
        assert codes[:5] == [201] * 5 and 429 in codes, codes
        assert requests.post(server.url("/api/test/reset"), headers={"X-TouchSync-Test": "1"}).status_code == 200
        frank = server.register("frank")
        codes = [requests.post(server.url("/api/mobile/posts"), json={"content": "p"}, headers=server.auth(frank)).status_code
                 for _ in range(12)]
        assert codes == [201] * 12, codes
    finally:
        stop_own_server(server)
