"""`room:join` ack latency, for the choice of where Socket.IO event handlers run.

One raw Engine.IO v4 / Socket.IO v5 WebSocket (websocket-client: the client adds no scheduling of
its own), one user and one empty room; then N `room:join` events, each with an ack id, one at a
time: the time from sending `421N["room:join",...]` to receiving its ack `43N[...]` (the
`elements:batch` the server sends first is read and skipped). Several servers may be given
(`--base` more than once): the runs are interleaved in rounds, A then B then A..., so a machine
loaded by other work loads every server alike. Prints median/p99 per server and `RESULT {json}`.

  python bench/room-join-latency.py --base http://127.0.0.1:3000 [--base http://127.0.0.1:3001] [--joins 200] [--rounds 5]
"""
import argparse
import json
import statistics
import time

import websocket

from tsbench import register


def connect(base, token):
    ws = websocket.create_connection(base.replace("http", "ws", 1) + "/socket.io/?EIO=4&transport=websocket", timeout=10)
    assert ws.recv().startswith("0{")
    ws.send('40{"token":"%s"}' % token)
    assert ws.recv().startswith("40{")
    return ws


def joins(ws, room_id, count, first_id):
    samples = []
    for i in range(count):
        ack = first_id + i
        start = time.perf_counter()
        ws.send('42%d["room:join",{"roomId":"%s"}]' % (ack, room_id))
        prefix = "43%d[" % ack
        while True:
            m = ws.recv()
            if m == "2":  # Engine.IO ping
                ws.send("3")
                continue
            if m.startswith(prefix):
                samples.append((time.perf_counter() - start) * 1000)
                break
    return samples


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--base", action="append", required=True)
    p.add_argument("--joins", type=int, default=200, help="joins per server per round")
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args()
    servers = []
    for base in a.base:
        token, room = register(base, "join")
        ws = connect(base, token)
        joins(ws, room, 20, 1)  # warm-up
        servers.append({"base": base, "ws": ws, "room": room, "next": 100, "samples": []})
    for _ in range(a.rounds):
        for s in servers:
            s["samples"] += joins(s["ws"], s["room"], a.joins, s["next"])
            s["next"] += a.joins
    results = []
    for s in servers:
        s["ws"].close()
        v = sorted(s["samples"])
        r = {"base": s["base"], "joins": len(v), "median_ms": round(statistics.median(v), 3),
             "p99_ms": round(v[max(0, int(len(v) * 0.99) - 1)], 3), "max_ms": round(v[-1], 3)}
        results.append(r)
        print(f"{r['base']}: {r['joins']} joins, median {r['median_ms']} ms, p99 {r['p99_ms']} ms, max {r['max_ms']} ms")
    print("RESULT " + json.dumps(results))


if __name__ == "__main__":
    main()
