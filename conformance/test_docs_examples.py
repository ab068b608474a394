"""The example answers printed in docs/test-mode.md are what the server answers: the fixtures
example's `counts` and `lastEventSequence` (a drift there sends an app developer's `since` off by
one)."""
import json
import os
import re

import requests

from conftest import ROOT, start_own_server, stop_own_server


def doc_block_after(doc, marker):
    """The first ```json block after the line containing `marker`."""
    at = doc.index(marker)
    m = re.search(r"```json\n(.*?)```", doc[at:], re.S)
    assert m, f"no json block after {marker!r}"
    return m.group(1)


def test_the_fixtures_example_answer_matches_the_server():
    doc = open(os.path.join(ROOT, "docs", "test-mode.md")).read()
    block = doc_block_after(doc, "--data @config/fixtures/example.json")
    documented_counts = json.loads(re.search(r'"counts": (\{[^}]*\})', block).group(1))
    documented_seq = int(re.search(r'"lastEventSequence": (\d+)', block).group(1))
    server = start_own_server({}, args=["--test-mode"])
    try:
        with open(os.path.join(ROOT, "config", "fixtures", "example.json"), "rb") as f:
            r = requests.post(server.base + "/api/test/fixtures", data=f, timeout=30,
                              headers={"Content-Type": "application/json", "X-TouchSync-Test": "1"})
        assert r.status_code == 201, r.text
        data = r.json()["data"]
        assert data["counts"] == documented_counts, f"docs/test-mode.md shows {documented_counts}, the server {data['counts']}"
        assert data["lastEventSequence"] == documented_seq, \
            f"docs/test-mode.md shows lastEventSequence {documented_seq}, a fresh server answers {data['lastEventSequence']}"
    finally:
        stop_own_server(server)


def test_fast_heartbeats_drop_a_silent_client_in_about_three_seconds():
    """docs/test-mode.md "Fast heartbeats for tests": with 1 s / 2 s a client that stops answering
    is gone about 3 s after the handshake, not 45 s."""
    import time
    server = start_own_server({"TOUCHSYNC_REALTIME_PING_INTERVAL": "1s", "TOUCHSYNC_REALTIME_PING_TIMEOUT": "2s"}, args=["--test-mode"])
    try:
        started = time.monotonic()
        r = requests.get(server.base + "/socket.io/?EIO=4&transport=polling", timeout=10)
        handshake = json.loads(r.text[1:])
        assert (handshake["pingInterval"], handshake["pingTimeout"]) == (1000, 2000), handshake
        sid = handshake["sid"]
        # Silent: no poll, so the server's ping at 1 s is never answered. Waiting on the session's own
        # end: a poll for it answers 400 (unknown sid) once the server has dropped it.
        deadline = started + 10
        gone = None
        while time.monotonic() < deadline:
            probe = requests.get(f"{server.base}/socket.io/?EIO=4&transport=polling&sid={sid}", timeout=10)
            if probe.status_code == 400:
                gone = time.monotonic() - started
                break
            # A poll answers the ping (`2`) at once; answering it would keep the client alive, so do not.
            time.sleep(0.1)
        assert gone is not None, "the silent session was not dropped within 10 s"
        assert 2.5 <= gone <= 4.5, f"dropped after {gone:.2f} s, expected about 3 s (1 s interval + 2 s timeout)"
    finally:
        stop_own_server(server)
