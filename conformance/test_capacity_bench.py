"""`touchsync-bench capacity` (bench/README.md, "Capacity") against a real `touchsync serve` it
starts itself: 20 simulated app users for a few seconds, every part of the mix sped up so each
path runs (polling handshake and websocket upgrade, joins, creates and drags, hearts, MyRooms,
interaction-state, room switches, returns from the background). The report must have its shape,
its numbers must come from real traffic (samples of every kind, every member delivery accounted
for, no errors), and its last line must agree with the step's verdict. A functional check, not a
measurement: nothing here depends on how fast the machine is."""
import json
import os
import re
import subprocess
import tempfile

import pytest

from test_cli import BIN

BENCH = os.path.join(os.path.dirname(BIN), "touchsync-bench")


def test_a_short_capacity_run_reports_every_measure_and_its_verdict():
    if not os.path.exists(BENCH):
        pytest.skip(f"no {BENCH}: `swift build` builds it beside touchsync")
    with tempfile.TemporaryDirectory() as data:
        r = subprocess.run(
            [BENCH, "capacity", "--server-bin", BIN, "--data", data, "--start", "20", "--step", "20", "--max", "20",
             "--warmup", "1s", "--steady", "8s",
             # Every action several times within 8 s (the real periods are 10 s to 5 minutes).
             "--heart-every", "2s", "--write-every", "2s", "--my-rooms-every", "4s", "--interactions-every", "4s",
             "--switch-every", "4s", "--background-every", "6s", "--background-pause", "500ms"],
            capture_output=True, text=True, timeout=90)
        out = r.stdout
        assert r.returncode == 0, out + r.stderr
        lines = out.splitlines()

        assert any(re.match(r"^seeded 60 users, 9 rooms of 100 elements in [0-9.]+ s$", l) for l in lines), out
        results = [json.loads(l[len("RESULT "):]) for l in lines if l.startswith("RESULT ")]
        assert len(results) == 1, out
        step = results[0]
        assert step["users"] == 20
        # Real traffic of every kind reached the server and came back.
        for count in ("creates", "joins", "reconnects", "rest_requests"):
            assert step[count] > 0, f"{count}: {out}"
        for p99 in ("visible_p99_ms", "join_p99_ms", "reconnect_p99_ms", "rest_p99_ms", "lag_p99_ms"):
            assert step[p99] is not None and step[p99] >= 0, f"{p99}: {out}"
        assert step["errors"] == 0 and step["lost"] == 0, out
        assert 0 < step["server_cpu"] < 4 and step["server_rss_mb"] > 0, out
        for measure in ("create→visible to all members:", "room:join→elements:batch", "reconnect (handshake→room re-joined):",
                        "REST toggle:", "REST my-rooms:", "REST interaction-state:", "ack element:create:", "ack element:update:",
                        "ack room:leave:", "server: CPU", "load side: CPU", "verdict:"):
            assert measure in out, f"{measure}: {out}"

        # The last line is the capacity, consistent with the one step's verdict.
        m = re.match(r"^capacity: (\d+) users \((.*)\)$", lines[-1])
        assert m, lines[-1]
        if step["valid"] and step["passed"]:
            assert m.group(1) == "20" and "every step passed up to --max 20" in m.group(2), lines[-1]
        elif step["valid"]:
            assert m.group(1) == "0" and "20 users failed:" in m.group(2), lines[-1]
        else:
            assert m.group(1) == "0" and "a lower bound" in m.group(2), lines[-1]
