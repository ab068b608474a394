"""Paired cross-node latency probe (bench/run-cluster.sh latency).

One raw Engine.IO/Socket.IO WebSocket on node A and one on node B join the same room; elements are
created one at a time over REST on node A. For every element both arrival times are recorded, so
  same  = arrival on A - POST sent      (the one-node path, commit included)
  cross = arrival on B - POST sent      (A -> Redis -> B)
  extra = arrival on B - arrival on A   (what the Redis hop adds, paired per event: the commit
                                         time and the machine's noise cancel out)
Prints p50/p90/p99/max of each in ms and a last line `RESULT {json}` (bench/lib.sh median_of).

  python bench/cluster-latency.py --a http://127.0.0.1:3911 --b http://127.0.0.1:3912 --data DIR [--events 500 --rate 50]
"""
import argparse
import json
import statistics
import threading
import time

import requests
import websocket


def lines(data, name):
    with open(f"{data}/{name}.txt") as f:
        return [l.strip() for l in f if l.strip()]


class Socket:
    """A websocket-only Socket.IO client that timestamps element:created by element id."""

    def __init__(self, base, token, room):
        self.arrived = {}
        self.ws = websocket.create_connection(base.replace("http://", "ws://") + f"/socket.io/?EIO=4&transport=websocket&token={token}", timeout=10)
        assert self.ws.recv().startswith("0{")
        self.ws.send("40")
        while not self.ws.recv().startswith("40"):
            pass
        self.ws.send('421["room:join",{"roomId":"%s"}]' % room)
        while not self.ws.recv().startswith("431"):
            pass
        self.ws.settimeout(None)
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        prefix = '42["element:created",'
        try:
            while True:
                m = self.ws.recv()
                t = time.monotonic_ns()
                if m == "2":
                    self.ws.send("3")
                elif m.startswith(prefix):
                    self.arrived[json.loads(m[2:])[1]["element"]["id"]] = t
        except Exception:
            pass


def pct(samples, q):
    s = sorted(samples)
    return s[max(0, min(len(s) - 1, int(len(s) * q + 0.999999) - 1))] if s else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="node A (REST writes, same-node socket)")
    ap.add_argument("--b", required=True, help="node B (cross-node socket)")
    ap.add_argument("--data", required=True, help="touchsync bench-seed output directory")
    ap.add_argument("--events", type=int, default=500)
    ap.add_argument("--rate", type=float, default=50.0, help="creations per second (one at a time)")
    o = ap.parse_args()
    members = lines(o.data, "member-tokens")
    room = lines(o.data, "fanout-room")[0]
    writer = members[0]
    sa = Socket(o.a, members[1], room)
    sb = Socket(o.b, members[2], room)
    http = requests.Session()
    sent = {}
    body = {"type": "note", "positionX": 1, "positionY": 2, "width": 10, "height": 10}
    for i in range(o.events + 10):  # the first 10 warm up
        due = time.monotonic() + 1.0 / o.rate
        t0 = time.monotonic_ns()
        r = http.post(f"{o.a}/api/rooms/{room}/elements", json=body, headers={"Authorization": "Bearer " + writer})
        assert r.status_code == 201, r.text
        if i >= 10:
            sent[r.json()["data"]["id"]] = t0
        time.sleep(max(0.0, due - time.monotonic()))
    deadline = time.time() + 10
    while time.time() < deadline and not all(e in sa.arrived and e in sb.arrived for e in sent):
        time.sleep(0.05)
    both = [e for e in sent if e in sa.arrived and e in sb.arrived]
    same = [(sa.arrived[e] - sent[e]) / 1e6 for e in both]
    cross = [(sb.arrived[e] - sent[e]) / 1e6 for e in both]
    extra = [(sb.arrived[e] - sa.arrived[e]) / 1e6 for e in both]
    result = {"events": len(sent), "lost": len(sent) - len(both)}
    for name, s in (("same", same), ("cross", cross), ("extra", extra)):
        for q, label in ((0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (1.0, "max")):
            result[f"{name}_{label}_ms"] = pct(s, q)
        print(f"{name:6s} p50 {pct(s, .5):8.3f}  p90 {pct(s, .9):8.3f}  p99 {pct(s, .99):8.3f}  max {max(s) if s else float('nan'):8.3f} ms"
              f"  (mean {statistics.mean(s) if s else float('nan'):.3f})")
    print("RESULT " + json.dumps(result))


if __name__ == "__main__":
    main()
