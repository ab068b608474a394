"""A burst of events in one room (a fixtures load, an import of hundreds of elements) with a real
server: every event's global part reaches every member, although the burst is far larger than the
database's read queue (`database.maxQueuedReads`, lowered to 1 here so that a burst of 1,000 shows
it: without a bound of its own the broadcaster's member reads were refused past it, and each
refused read left its event's `element:created:global` unsent)."""
import requests

from conftest import start_own_server, stop_own_server

ELEMENTS = 1000
TEST = {"X-TouchSync-Test": "1"}


def test_a_fixtures_burst_larger_than_the_read_queue_sends_every_global_event_to_every_member():
    server = start_own_server({"TOUCHSYNC_DATABASE_MAX_QUEUED_READS": "1"}, args=["--test-mode"])
    try:
        since = requests.get(server.url("/api/test/events?limit=1"), headers=TEST, timeout=30).json()["data"]["lastSequence"]
        doc = {
            "users": [{"username": "burst_alice", "password": "password-123"}, {"username": "burst_bob", "password": "password-123"}],
            "rooms": [{"ref": "r", "createdBy": "burst_alice", "members": ["burst_bob"]}],
            "elements": [{"ref": f"e{i}", "room": "r", "createdBy": ("burst_alice", "burst_bob")[i % 2], "type": "note",
                          "content": f"note {i}"} for i in range(ELEMENTS)],
        }
        r = requests.post(server.url("/api/test/fixtures"), json=doc, headers=TEST, timeout=300)
        assert r.status_code in (200, 201), r.text
        fx = r.json()["data"]
        room = fx["rooms"]["r"]
        members = {fx["users"][u]["id"] for u in ("burst_alice", "burst_bob")}
        log = requests.get(server.url(f"/api/test/events?since={since}&event=element:created:global&roomId={room}&limit=10000"),
                           headers=TEST, timeout=30).json()["data"]["events"]
        sent = {(e["payload"]["elementId"], e["target"].get("userId")) for e in log}
        expected = {(fx["elements"][f"e{i}"], m) for i in range(ELEMENTS) for m in members}
        missing = expected - sent
        assert not missing, f"{len(missing)} of {len(expected)} global deliveries never sent; server log:\n" + \
            "".join(l for l in server.log_lines if "not sent" in l or "overloaded" in l)[-3000:]
        assert not [l for l in server.log_lines if "not sent" in l], "a global event was logged as not sent"
    finally:
        stop_own_server(server)
