"""Connect-to-first-event latency of `touchsync serve` (set-up pacing, `EngineSetupPacing`).

What an app does when it opens: one raw Engine.IO v4 / Socket.IO v5 WebSocket (websocket-client,
so the client adds no delay of its own), the CONNECT with its token, and as soon as the CONNECT
reply arrives a `room:join`; the first event is the `elements:batch` it answers with. Measured
from before the TCP connect to the batch's arrival, N times in a row, on one user and one empty
room. Prints min/median/p90/max in ms and a last line `RESULT {json}`.

  python bench/connect-latency.py --base http://127.0.0.1:3000 [--runs 50]
"""
import argparse
import json
import statistics
import time

import websocket

from tsbench import register


def one(ws_url, token, room_id):
    start = time.perf_counter()
    ws = websocket.create_connection(ws_url, timeout=10)
    try:
        assert ws.recv().startswith("0{")
        ws.send('40{"token":"%s"}' % token)
        assert ws.recv().startswith("40{")
        ws.send('421["room:join",{"roomId":"%s"}]' % room_id)
        while True:
            m = ws.recv()
            if m.startswith('42["elements:batch"'):
                return (time.perf_counter() - start) * 1000
    finally:
        ws.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--base", required=True)
    p.add_argument("--runs", type=int, default=50)
    a = p.parse_args()
    token, room_id = register(a.base, "lat")
    ws_url = a.base.replace("http", "ws", 1) + "/socket.io/?EIO=4&transport=websocket"
    one(ws_url, token, room_id)  # warm-up
    samples = sorted(one(ws_url, token, room_id) for _ in range(a.runs))
    result = {
        "runs": a.runs,
        "min_ms": round(samples[0], 2),
        "median_ms": round(statistics.median(samples), 2),
        "p90_ms": round(samples[int(len(samples) * 0.9) - 1], 2),
        "max_ms": round(samples[-1], 2),
    }
    print(f"connect -> CONNECT reply -> room:join -> elements:batch, {a.runs} runs: "
          f"min {result['min_ms']} ms, median {result['median_ms']} ms, p90 {result['p90_ms']} ms, max {result['max_ms']} ms")
    print("RESULT " + json.dumps(result))


if __name__ == "__main__":
    main()
