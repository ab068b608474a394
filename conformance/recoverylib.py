"""Clients that speak what socket.io-client >= 4.6 sends for connection state recovery, over a raw
WebSocket (python-socketio keeps no `pid`/`offset`): on reconnect, CONNECT with its auth plus the
`pid` of the first CONNECT reply and the last `offset` it saw (the last argument of the last
event). Used by conformance/test_cluster_recovery.py and conformance/test_chaos.py.
"""
import json
import threading
import time

import websocket


class RawSocket:
    """Engine.IO v4 / Socket.IO v5 over websocket-client, answering pings; remembers the last
    offset (the last argument of the last event), as socket.io-client does."""

    def __init__(self, base, auth, headers=None):
        self.ws = websocket.create_connection(base.replace("http", "ws") + "/socket.io/?EIO=4&transport=websocket", timeout=10,
                                              header=headers or [])
        assert self.ws.recv().startswith("0{")
        self.ws.send("40" + json.dumps(auth))
        reply = self.next()
        assert reply.startswith("40{"), reply
        self.handshake = json.loads(reply[2:])
        self.offset = None

    def next(self):
        while True:
            m = self.ws.recv()
            if m == "2":
                self.ws.send("3")
                continue
            return m

    def event(self):
        m = self.next()
        assert m.startswith("42"), m
        e = json.loads(m[2:])
        if len(e) > 1 and isinstance(e[-1], str):
            self.offset = e[-1]
        return e

    def join(self, room_id):
        self.ws.send('420["room:join",{"roomId":"%s"}]' % room_id)
        batch = self.event()
        while batch[0] == "element:created:global":  # of an element created before (the batch has it)
            batch = self.event()
        assert batch[0] == "elements:batch", batch
        assert self.next().startswith("430")
        return batch


class RecoveringClient:
    """A client of one room through `base` (nginx, pinned with `touchsync_node=<node>`), that on
    losing its connection reconnects as socket.io-client does with recovery: its `pid` and last
    offset. `created` lists element ids in arrival order; `recoveries` and `fresh` count the
    reconnects that got the session back or not. A fresh one re-joins the room and, as the app
    does, merges the join's `elements:batch` into what it holds (ids it has not seen yet, in the
    batch's order): what it missed while away arrives that way instead of as replayed packets."""

    def __init__(self, base, token, room, node):
        self.base = base
        self.token = token
        self.room = room
        self.headers = [f"Cookie: touchsync_node={node}"]
        self.lock = threading.Lock()
        self.created = []
        self.connects = 0
        self.recoveries = 0
        self.fresh = 0
        self.closed = False
        self.sock = RawSocket(base, {"token": token}, self.headers)
        self.sock.join(room)
        self.connects = 1
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def sid(self):
        return self.sock.handshake.get("sid")

    def created_ids(self):
        with self.lock:
            return list(self.created)

    def run(self):
        while not self.closed:
            try:
                self.sock.ws.settimeout(1)
                e = self.sock.event()
            except websocket.WebSocketTimeoutException:
                continue
            except Exception:
                if self.closed or not self.reconnect():
                    return
                continue
            if e[0] == "element:created":
                with self.lock:
                    self.created.append(e[1]["element"]["id"])

    def reconnect(self, timeout=30):
        pid, offset, sid = self.sock.handshake.get("pid"), self.sock.offset, self.sid()
        deadline = time.time() + timeout
        while time.time() < deadline and not self.closed:
            try:
                back = RawSocket(self.base, {"token": self.token, "pid": pid, "offset": offset}, self.headers)
            except Exception:
                time.sleep(0.2)
                continue
            with self.lock:
                self.connects += 1
                if back.handshake.get("sid") == sid:
                    self.recoveries += 1
                else:
                    self.fresh += 1
            back.offset = offset
            self.sock = back
            if back.handshake.get("sid") != sid:
                batch = back.join(self.room)[1]["elements"]
                with self.lock:
                    held = set(self.created)
                    self.created += [e["id"] for e in batch if e["id"] not in held]
            return True
        return False

    def close(self):
        self.closed = True
        try:
            self.sock.ws.close()
        except Exception:
            pass
