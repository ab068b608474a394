#!/usr/bin/env python3
"""bench/redis-latency.py — the extra latency of a cross-node delivery over Redis.

Two `touchsync serve --redis-url` nodes (release build) share one SQLite file and one Redis. One
raw Socket.IO client (websocket-client, WebSocket transport) listens on node A and one on node B,
both as members of one room. Elements are created through node A's REST at a steady rate; for each
one the script records when `element:created` reached the socket on A (same node: no Redis on the
path) and on B (cross node: A → Redis → B → B's broadcaster). It prints p50/p99 of both, measured
from just before the POST, and of the per-event difference B − A, which is what Redis adds.

  python3 bench/redis-latency.py [--events 500] [--rate 50] [--bin .build/release/touchsync] [--transport stream|pubsub]

--transport sets realtime.redis.transport on both nodes (stream: XADD + a blocking XREAD per node,
the default; pubsub: PUBLISH/SUBSCRIBE), to compare what the two cost on the same machine.

Needs redis-server (a throw-away one is started on a free port) and websocket-client + requests
(conformance/requirements.txt, in .venv). Nodes on CPU $SERVER_CPU (0), this script and Redis on
$LOAD_CPU (1), as everywhere in bench/. Numbers go to bench/RESULTS.md by hand with the load average.
"""
import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import requests
import websocket

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


class Listener:
    """A raw Socket.IO v5 client over WebSocket that timestamps each element:created."""

    def __init__(self, base, token, room):
        self.arrivals = {}
        self.ws = websocket.create_connection(base.replace("http://", "ws://") + "/socket.io/?EIO=4&transport=websocket", timeout=10)
        assert self.ws.recv().startswith("0{")
        self.ws.send("40" + json.dumps({"token": token}))
        assert self.ws.recv().startswith("40")
        self.ws.send("421" + json.dumps(["room:join", {"roomId": room}]))
        while not self.ws.recv().startswith("431"):
            pass
        self.ws.settimeout(None)
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        while True:
            try:
                m = self.ws.recv()
            except Exception:
                return
            now = time.perf_counter()
            if m == "2":
                self.ws.send("3")
            elif m.startswith('42["element:created"'):
                self.arrivals[json.loads(m[2:])[1]["element"]["id"]] = now


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=500)
    ap.add_argument("--rate", type=float, default=50, help="creates per second")
    ap.add_argument("--bin", default=os.path.join(ROOT, ".build", "release", "touchsync"))
    ap.add_argument("--transport", choices=("stream", "pubsub"), default="stream")
    args = ap.parse_args()
    server_cpu, load_cpu = os.environ.get("SERVER_CPU", "0"), os.environ.get("LOAD_CPU", "1")
    taskset = shutil.which("taskset")
    pin = (lambda cpu: [taskset, "-c", cpu]) if taskset else (lambda cpu: [])
    if taskset:
        os.sched_setaffinity(0, {int(load_cpu)})
    tmp = tempfile.mkdtemp(prefix="touchsync-redis-latency-")
    procs = []
    try:
        rport = free_port()
        procs.append(subprocess.Popen(pin(load_cpu) + ["redis-server", "--port", str(rport), "--bind", "127.0.0.1", "--save", "",
                                                      "--appendonly", "no", "--dir", tmp], stdout=subprocess.DEVNULL))
        assert wait_port(rport, 10), "redis-server did not start"
        env = dict(os.environ, TOUCHSYNC_JWT_SECRET="redis-latency-secret-0123456789abcdef", TOUCHSYNC_AUTH_PASSWORD_ITERATIONS="1000",
                   TOUCHSYNC_LOG_LEVEL="warning", TOUCHSYNC_REALTIME_REDIS_TRANSPORT=args.transport)
        bases = []
        for _ in range(2):
            port = free_port()
            procs.append(subprocess.Popen(pin(server_cpu) + [args.bin, "serve", "--port", str(port), "--database", os.path.join(tmp, "db.sqlite"),
                                                            "--redis-url", f"redis://127.0.0.1:{rport}"], env=env, stdout=subprocess.DEVNULL))
            assert wait_port(port, 30), "node did not start"
            bases.append(f"http://127.0.0.1:{port}")
            while requests.get(bases[-1] + "/health").json().get("redis") != "ok":
                time.sleep(0.05)
        a, b = bases
        http = requests.Session()
        users = []
        for name in ("alice", "bob"):
            r = http.post(a + "/api/auth/register", json={"username": f"{name}_{uuid.uuid4().hex[:6]}", "password": "password-123"})
            users.append(r.json()["data"])
        alice, bob = users
        h = {"Authorization": "Bearer " + alice["token"]}
        room = http.post(a + "/api/rooms", json={"memberIds": [bob["user"]["id"]]}, headers=h).json()["data"]["id"]
        on_a, on_b = Listener(a, bob["token"], room), Listener(b, bob["token"], room)
        sent = {}
        interval = 1.0 / args.rate
        next_at = time.perf_counter()
        for i in range(args.events):
            next_at += interval
            t0 = time.perf_counter()
            r = http.post(f"{a}/api/rooms/{room}/elements", headers=h,
                          json={"type": "note", "content": f"e{i}", "positionX": 1, "positionY": 2, "width": 10, "height": 10})
            sent[r.json()["data"]["id"]] = t0
            time.sleep(max(0, next_at - time.perf_counter()))
        time.sleep(1.0)
        same = [(on_a.arrivals[e] - t) * 1000 for e, t in sent.items() if e in on_a.arrivals]
        cross = [(on_b.arrivals[e] - t) * 1000 for e, t in sent.items() if e in on_b.arrivals]
        extra = [(on_b.arrivals[e] - on_a.arrivals[e]) * 1000 for e in sent if e in on_a.arrivals and e in on_b.arrivals]
        load = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else "?"
        print(f"transport {args.transport}; events {args.events} at {args.rate}/s; received same-node {len(same)}, cross-node {len(cross)}; load average {' '.join(load)}")
        for name, xs in (("same-node (A→A)", same), ("cross-node (A→Redis→B)", cross), ("extra (B − A, per event)", extra)):
            if xs:
                print(f"  {name:26s} p50 {statistics.median(xs):7.2f} ms   p99 {pct(xs, 99):7.2f} ms")
        return 0 if len(same) == len(cross) == args.events else 1
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
