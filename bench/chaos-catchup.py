"""Catch-up after a Redis outage, per transport (realtime.redis.transport: stream, pubsub).

The cluster of conformance/chaoslib.py (PostgreSQL, Redis and three nodes, each in its own network
namespace; needs root): one raw Socket.IO WebSocket on node 2 joins a room; Redis goes away for
--outage seconds while --events creates are made through node 1 (spread over the outage); then
Redis comes back. Measured: from the moment Redis is back to the arrival of the last of those
creates at node 2's socket (catch-up), and how many arrived at all.

Outage kinds (--kind):
  partition  every node's link to Redis goes dark (far end down: a black hole, no RST), healed after
  kill       redis-server killed with SIGKILL, restarted on its append-only file (fsync always)

Prints one line per run and a last line `RESULT {json}` per transport.

  sudo .venv/bin/python bench/chaos-catchup.py [--transports stream,pubsub --kind partition --outage 10 --events 1000 --runs 1]
  TOUCHSYNC_BIN picks the server binary (default .build/release/touchsync, else .build/debug/touchsync).
"""
import argparse
import concurrent.futures
import importlib.util
import json
import os
import sys
import threading
import time

import requests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "conformance"))
import chaoslib  # noqa: E402

spec = importlib.util.spec_from_file_location("cluster_latency", os.path.join(ROOT, "bench", "cluster-latency.py"))
cluster_latency = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cluster_latency)

BODY = {"type": "note", "positionX": 1, "positionY": 2, "width": 100, "height": 50}


def register(base, name):
    r = requests.post(base + "/api/auth/register", json={"username": name, "password": "password-123", "firstName": name}, timeout=30)
    r.raise_for_status()
    d = r.json()["data"]
    return d["user"]["id"], d["token"]


def one_run(transport, kind, outage, events):
    # Per-user write limits off: 1,000 creates in 10 s from one writer is the load, not abuse.
    c = chaoslib.ChaosCluster(extra_env={"TOUCHSYNC_REALTIME_REDIS_TRANSPORT": transport, "TOUCHSYNC_LIMITS_ENABLED": "false"})
    why = c.missing()
    if why:
        sys.exit(f"cannot run: {why}")
    try:
        c.start()
        n1, n2 = c.nodes[0], c.nodes[1]
        tag = os.urandom(3).hex()
        writer_id, writer_token = register(n1.base, f"w{tag}")
        member_id, member_token = register(n1.base, f"m{tag}")
        r = requests.post(n1.base + "/api/rooms", json={"memberIds": [member_id]}, headers={"Authorization": "Bearer " + writer_token}, timeout=30)
        r.raise_for_status()
        room = r.json()["data"]["id"]
        sock = cluster_latency.Socket(n2.base, member_token, room)

        # Fan-out works before the outage.
        probe = requests.post(f"{n1.base}/api/rooms/{room}/elements", json=BODY, headers={"Authorization": "Bearer " + writer_token}, timeout=30).json()["data"]["id"]
        deadline = time.time() + 30
        while probe not in sock.arrived and time.time() < deadline:
            time.sleep(0.05)
        assert probe in sock.arrived, "no cross-node delivery before the outage"

        if kind == "partition":
            for n in c.nodes:
                c.partition_redis(n)
        else:
            c.kill_redis()
        down_at = time.time()
        ids, refused, lock = [], {}, threading.Lock()
        session = threading.local()

        def create(i):
            # Spread over the outage: create i leaves at i/events of it.
            wait = down_at + outage * 0.9 * i / events - time.time()
            if wait > 0:
                time.sleep(wait)
            if not hasattr(session, "s"):
                session.s = requests.Session()
            r = session.s.post(f"{n1.base}/api/rooms/{room}/elements", json=BODY, headers={"Authorization": "Bearer " + writer_token}, timeout=60)
            with lock:
                if r.status_code == 201:
                    ids.append(r.json()["data"]["id"])
                else:
                    refused[r.status_code] = refused.get(r.status_code, 0) + 1
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(create, range(events)))
        made_in = time.time() - down_at   # past the outage when the node is slower than the pace asked
        rest = outage - (time.time() - down_at)
        if rest > 0:
            time.sleep(rest)
        if kind == "partition":
            for n in c.nodes:
                c.partition_redis(n, cut=False)
        else:
            c.start_redis()
        back = time.monotonic_ns()
        outage_actual = time.time() - down_at
        want = set(ids)
        deadline = time.time() + 120
        while time.time() < deadline and not want <= set(sock.arrived):
            time.sleep(0.02)
        got = [sock.arrived[e] for e in want if e in sock.arrived]
        catchup = (max(got) - back) / 1e9 if len(got) == len(want) else None
        return {"transport": transport, "kind": kind, "outage_s": outage, "acknowledged": len(want), "refused": refused, "delivered": len(got),
                "made_in_s": round(made_in, 2), "outage_actual_s": round(outage_actual, 2), "catchup_s": None if catchup is None else round(max(0.0, catchup), 3),
                "first_after_back_s": round((min(got) - back) / 1e9, 3) if got else None}
    finally:
        c.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--transports", default="stream,pubsub")
    ap.add_argument("--kind", choices=["partition", "kill"], default="partition")
    ap.add_argument("--outage", type=float, default=10.0)
    ap.add_argument("--events", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=1)
    a = ap.parse_args()
    if not os.environ.get("TOUCHSYNC_BIN"):
        release = os.path.join(ROOT, ".build", "release", "touchsync")
        os.environ["TOUCHSYNC_BIN"] = release if os.access(release, os.X_OK) else os.path.join(ROOT, ".build", "debug", "touchsync")
    print(f"binary: {os.environ['TOUCHSYNC_BIN']}; load average at start: {open('/proc/loadavg').read().split()[:3]}")
    for t in a.transports.split(","):
        runs = []
        for i in range(a.runs):
            r = one_run(t, a.kind, a.outage, a.events)
            r["load1"] = float(open("/proc/loadavg").read().split()[0])
            print(f"{t} run {i + 1}: {r}", flush=True)
            runs.append(r)
        print("RESULT " + json.dumps({"transport": t, "runs": runs}), flush=True)


if __name__ == "__main__":
    main()
