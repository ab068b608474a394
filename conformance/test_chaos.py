"""Chaos over real links: PostgreSQL, Redis and three `touchsync serve` nodes each in a network
namespace of its own (conformance/chaoslib.py), python-socketio clients on every node through
nginx, a stream of REST writes through every node, and faults made where they happen in
production: a link that goes dark (`ip link set … down` on the far end: the node's packets vanish,
nothing answers, no RST), a node killed with SIGKILL, and a relay between the nodes and Redis
that delays, stalls and resets the byte stream (this kernel may have no netem qdisc).

Each scenario prints what it counted (events acknowledged, delivered, duplicated, lost, per
client), then asserts. Durations scale with TOUCHSYNC_CHAOS_PARTITION_SECONDS (the Redis and
PostgreSQL partitions, 10 s by default), TOUCHSYNC_CHAOS_FAULT_SECONDS (each relay phase, 12 s)
and TOUCHSYNC_CHAOS_RATE (creates per second per node, 20), so a local run can be longer and
heavier than the CI run; the defaults keep the module near two minutes.

Needs root, iproute2, PostgreSQL's binaries, redis-server and nginx; otherwise the module skips
with the reason (`pytest -rs`).
"""
import json
import os
import statistics
import threading
import time

import engineio.packet
import pytest
import requests

import chaoslib
from chaoslib import ADMIN_TOKEN, ChaosCluster
from conftest import wait_for
from test_cluster import Client, auth, make_room, register, wait_health

# Never beside another test (scripts/test runs the `serial` ones in their own phase): network namespaces and
# veth pairs on this host, and delivery timings across three nodes: one cluster at a time (docs/testing.md,
# "Parallel conformance").
pytestmark = pytest.mark.serial

PARTITION_S = float(os.environ.get("TOUCHSYNC_CHAOS_PARTITION_SECONDS", "10"))
FAULT_S = float(os.environ.get("TOUCHSYNC_CHAOS_FAULT_SECONDS", "12"))
RATE = float(os.environ.get("TOUCHSYNC_CHAOS_RATE", "20"))
PER_NODE_CLIENTS = int(os.environ.get("TOUCHSYNC_CHAOS_CLIENTS_PER_NODE", "2"))


def started_cluster(extra_env=None):
    c = ChaosCluster(extra_env=extra_env)
    reason = c.missing()
    if reason:
        pytest.skip("chaos test skipped: " + reason)
    try:
        c.start()
    except BaseException:
        c.stop()
        raise
    c.acked = {}       # room id -> (owner, set of element ids answered 201): checked in PostgreSQL at the end
    c.made = []
    c.results = {}     # scenario -> what a later check reads
    yield c
    for cl in c.made:
        cl.close()
    c.stop()


@pytest.fixture(scope="module")
def chaos():
    yield from started_cluster()


# --- clients and writers -------------------------------------------------------------------------------
class TimedClient(Client):
    """test_cluster.Client that records element:created in the order the packets came off the
    wire, with when each arrived and its payload's per-room sequence number (when the server sends
    one). python-engineio runs each message's handler in a thread of its own
    (engineio/client.py, `_receive_packet`: `run_async=True`), so the order handlers run in is not
    the order the server sent; the packets are read here on the transport's one reading thread,
    before that hand-off."""

    EVENT_PREFIX = '2["element:created",'   # a Socket.IO EVENT packet on the default namespace

    def __init__(self, c, user, node_index, rooms):
        super().__init__(c, user, node_index, rooms)
        self.arrivals = {}   # element id -> first arrival (time.time())
        self.seqs = []       # (element id, payload seq or None), in wire order
        self.sio.on("element:created", lambda payload: None)   # counted below, not by the handler
        eio = self.sio.eio
        hand_off = eio._receive_packet

        def receive(pkt):
            data = pkt.data
            if pkt.packet_type == engineio.packet.MESSAGE and isinstance(data, str) and data.startswith(self.EVENT_PREFIX):
                payload = json.loads(data[1:])[1]
                eid = payload["element"]["id"]
                with self.lock:
                    self.created.append(eid)
                    self.arrivals.setdefault(eid, time.time())
                    self.seqs.append((eid, payload.get("seq")))
            hand_off(pkt)
        eio._receive_packet = receive


def sockets_on(node):
    r = requests.get(node.base + "/inspector/api/sockets", headers={"Authorization": "Bearer " + ADMIN_TOKEN}, timeout=5)
    j = r.json()
    j = j.get("data", j)
    return {s["id"] for s in j["sockets"]}


def located(c, cl, node_index, timeout=10.0):
    node = c.nodes[node_index - 1]

    def there():
        try:
            sid = cl.sid()
            return bool(sid) and sid in sockets_on(node)
        except (requests.RequestException, ValueError, KeyError):
            return False
    return wait_for(there, timeout)


def routed_again(c, timeout=30.0):
    """True once nginx sends each node's cookie to that node again: a node it saw refuse (killed or
    restarting) is left out for fail_timeout (deploy/nginx/touchsync.conf), its clients sent to
    the backup meanwhile."""
    def all_routed():
        for n in c.nodes:
            try:
                r = requests.get(c.base + "/health", headers={"Cookie": f"touchsync_node={n.name}"}, timeout=5)
            except requests.RequestException:
                return False
            if f"touchsync_node={n.name};" not in r.headers.get("Set-Cookie", ""):
                return False
        return True
    return wait_for(all_routed, timeout, interval=0.25)


def clients_on_every_node(c, prefix, per_node=PER_NODE_CLIENTS, make=None):
    """A writer, a room, and `per_node` members' clients pinned to each node (checked there);
    `make(user, node_index, room)` gives a connected client (a TimedClient by default)."""
    writer = register(c.base, "writer")
    users = [register(c.base, f"{prefix}{i}") for i in range(per_node * len(c.nodes))]
    room = make_room(c, writer, users)
    clients = []
    for i, u in enumerate(users):
        k = i % len(c.nodes) + 1
        cl = make(u, k, room) if make else TimedClient(c, u, k, [room])
        c.made.append(cl)
        if not make:
            cl.connect()
        assert located(c, cl, k), f"{prefix} client {i} is not on node {k}:\n" + c.logs()
        clients.append(cl)
    return writer, room, clients


class Writers:
    """One thread per node creating elements in `room` through that node, one at a time, at most
    RATE a second: sent[k] lists node k's creates in the order they were answered 201 (their commit
    order), sent_at the time each request left. Failures are counted, not fatal: a partitioned
    node is expected to refuse."""

    def __init__(self, c, writer, room, nodes=None):
        self.c = c
        self.room = room
        self.sent = {}
        self.sent_at = {}
        self.refused = {}      # node -> [(status, body)] of answers other than 201
        self.failed = {}       # node -> count of requests that got no answer
        self.stop = threading.Event()
        self.lock = threading.Lock()
        body = {"type": "note", "positionX": 1, "positionY": 2, "width": 100, "height": 50}

        def run(k):
            s = requests.Session()
            node = c.nodes[k - 1]
            while not self.stop.is_set():
                started = time.time()
                try:
                    r = s.post(f"{node.base}/api/rooms/{room}/elements", json=body, headers=auth(writer), timeout=30)
                except requests.RequestException:
                    with self.lock:
                        self.failed[k] = self.failed.get(k, 0) + 1
                    s = requests.Session()
                    self.stop.wait(0.2)
                    continue
                if r.status_code == 201:
                    eid = r.json()["data"]["id"]
                    with self.lock:
                        self.sent[k].append(eid)
                        self.sent_at[eid] = (k, started)
                        c.acked[room][1].add(eid)
                else:
                    with self.lock:
                        self.refused[k].append((r.status_code, r.text[:200], r.headers.get("Retry-After")))
                self.stop.wait(max(0.0, 1.0 / RATE - (time.time() - started)))

        ks = nodes or list(range(1, len(c.nodes) + 1))
        for k in ks:
            self.sent[k], self.refused[k] = [], []
        self.threads = [threading.Thread(target=run, args=(k,), daemon=True) for k in ks]
        for t in self.threads:
            t.start()

    def count(self, k):
        with self.lock:
            return len(self.sent[k])

    def more(self, n, nodes=None, timeout=60):
        ks = nodes or list(self.sent)
        marks = {k: self.count(k) for k in ks}
        assert wait_for(lambda: all(self.count(k) >= marks[k] + n for k in ks), timeout), (
            f"writers did not make {n} more creates on nodes {ks}: refused {self.refused_summary()}, failed {self.failed}")

    def refused_summary(self):
        with self.lock:
            return {k: v[-1:] for k, v in self.refused.items() if v}

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=40)
        with self.lock:
            return {k: list(v) for k, v in self.sent.items()}


def tally(clients, sent):
    """Per client: (acknowledged, delivered, duplicated, lost) of the creates in `sent`."""
    rows = []
    want = {e for ids in sent.values() for e in ids}
    for cl in clients:
        got = [e for e in cl.created_ids() if e in want]
        rows.append((cl, len(want), len(set(got)), len(got) - len(set(got)), len(want - set(got))))
    return rows


def report(capsys, scenario, rows, extra=""):
    with capsys.disabled():
        print(f"\n[chaos] {scenario}{(': ' + extra) if extra else ''}")
        for cl, sent, delivered, dupes, lost in rows:
            print(f"[chaos]   client on node {cl.node_index}: sent {sent}, delivered {delivered}, duplicated {dupes}, lost {lost}"
                  f", reconnects {cl.connects - 1}")


def wait_all_delivered(clients, sent, timeout=60):
    want = {e for ids in sent.values() for e in ids}
    return wait_for(lambda: all(want <= set(cl.created_ids()) for cl in clients), timeout)


def settle():
    """A duplicate would arrive right behind the original: a short, bounded quiet period."""
    time.sleep(0.5)


def assert_once_in_origin_order(c, clients, sent, rows):
    for cl, total, delivered, dupes, lost in rows:
        assert lost == 0 and dupes == 0, (
            f"client on node {cl.node_index}: {lost} of {total} lost, {dupes} duplicated; disconnects {cl.disconnects}\n" + c.logs())
        got = cl.created_ids()
        for k, ids in sent.items():
            mine = set(ids)
            seen = [e for e in got if e in mine]
            first = next((i for i, (a, b) in enumerate(zip(seen, ids)) if a != b), None)
            assert seen == ids, (
                f"client on node {cl.node_index} got node {k}'s {len(ids)} events out of commit order: first at #{first}, "
                f"where it got the one committed as #{ids.index(seen[first]) if first is not None else '?'}\n" + c.logs(40))


def health(node):
    try:
        r = requests.get(node.base + "/health", timeout=10)
        return r.status_code, r.json()
    except (requests.RequestException, ValueError) as e:
        return None, {"error": str(e)}


# --- 1. Redis partitioned from one node, then healed ------------------------------------------------------
def test_redis_partitioned_from_one_node_then_healed_every_client_gets_every_event_once_in_origin_order(chaos, capsys):
    c = chaos
    node3 = c.nodes[2]
    writer, room, clients = clients_on_every_node(c, "p")
    writers = Writers(c, writer, room)
    writers.more(5)
    noticed = None
    cut_at = time.time()
    c.partition_redis(node3)
    try:
        while time.time() - cut_at < PARTITION_S:
            status, h = health(node3)
            if noticed is None and h.get("redis") not in (None, "ok") and h.get("status") == "degraded":
                noticed = time.time() - cut_at
            time.sleep(0.25)
    finally:
        c.partition_redis(node3, cut=False)
    healed_at = time.time()
    assert wait_health(node3, lambda h: h.get("status") == "ok", timeout=30), "node 3 did not recover after its Redis link healed:\n" + c.logs()
    recovered = time.time() - healed_at
    writers.more(5)
    sent = writers.finish()
    delivered = wait_all_delivered(clients, sent)
    settle()
    rows = tally(clients, sent)
    said = (f"node 3 said degraded after {noticed:.1f} s" if noticed is not None
            else "node 3 did not say degraded during the partition")
    report(capsys, f"Redis partitioned from node 3 for {PARTITION_S:.0f} s", rows,
           f"{said}; healthy again {recovered:.1f} s after the heal; all delivered: {delivered}; "
           f"acknowledged per node {({k: len(v) for k, v in sent.items()})}")
    assert not any(writers.refused.values()), f"a write was refused while only Redis was away: {writers.refused_summary()}"
    assert_once_in_origin_order(c, clients, sent, rows)
    c.results["partition"] = (clients, sent)


def test_after_the_redis_partition_every_client_saw_the_room_in_one_commit_order(chaos):
    """The run above, read again: every client got the room's creates in the same order, and
    where the payload numbers them (`seq`), the numbers only grow."""
    if "partition" not in chaos.results:
        pytest.skip("the Redis partition scenario did not complete")
    clients, sent = chaos.results["partition"]
    want = {e for ids in sent.values() for e in ids}
    orders = [[e for e in cl.created_ids() if e in want] for cl in clients]
    for cl, o in zip(clients[1:], orders[1:]):
        first = next((i for i, (a, b) in enumerate(zip(orders[0], o)) if a != b), None)
        assert o == orders[0], (f"the client on node {cl.node_index} saw the room's {len(o)} creates in another order than "
                                f"the client on node {clients[0].node_index}, first at position {first}")
    for cl in clients:
        seqs = [s for e, s in cl.seqs if e in want and s is not None]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), f"client on node {cl.node_index}: seq not increasing"


# --- 2. a node killed behind nginx -----------------------------------------------------------------------------
def test_node_killed_with_sigkill_its_clients_reconnect_through_nginx_and_keep_receiving(chaos, capsys):
    c = chaos
    node3 = c.nodes[2]
    writer, room, clients = clients_on_every_node(c, "k")
    on3 = [cl for cl in clients if cl.node_index == 3]
    writers = Writers(c, writer, room, nodes=[1, 2, 3])
    writers.more(5)
    c.kill_node(node3)
    reconnected = wait_for(lambda: all(cl.connects >= 2 and cl.joined.is_set() and cl.sio.connected for cl in on3), 30)
    assert reconnected, "a client of the killed node did not reconnect through nginx:\n" + c.logs()
    for cl in on3:
        assert located(c, cl, 1, timeout=2) or located(c, cl, 2, timeout=2), "a reconnected client is on no live node"
    # Counted from here: what the live nodes acknowledge once every client is back in the room
    # (node 3's creates before it died are left to the durability check at the end).
    with writers.lock:
        before = {e for ids in writers.sent.values() for e in ids}
    writers.more(10, nodes=[1, 2])
    sent = {k: [e for e in v if e not in before] for k, v in writers.finish().items() if k != 3}
    wait_all_delivered(clients, sent)
    settle()
    rows = tally(clients, sent)
    report(capsys, "node 3 killed (SIGKILL) behind nginx; counted: creates after its clients rejoined", rows)
    for cl, total, delivered, dupes, lost in rows:
        assert total >= 20 and lost == 0 and dupes == 0, (
            f"client on node {cl.node_index}: {lost} of {total} lost, {dupes} duplicated after the kill\n" + c.logs())

    c.start_node(node3)
    assert wait_health(node3, lambda h: h.get("status") == "ok", timeout=30), "node 3 did not come back:\n" + c.logs()
    assert routed_again(c), "nginx does not route to node 3 again:\n" + c.logs()


# --- 3. PostgreSQL partitioned from one node -------------------------------------------------------------------
def test_postgres_partitioned_from_one_node_it_answers_503_with_retry_after_and_recovers_without_restart(chaos, capsys):
    c = chaos
    node3 = c.nodes[2]
    pid = node3.proc.pid
    writer = register(c.base, "pgw")
    room = make_room(c, writer, [])
    body = {"type": "note", "positionX": 1, "positionY": 2, "width": 10, "height": 10}

    def post(node):
        started = time.time()
        r = requests.post(f"{node.base}/api/rooms/{room}/elements", json=body, headers=auth(writer), timeout=60)
        if r.status_code == 201:
            c.acked[room][1].add(r.json()["data"]["id"])
        return r, time.time() - started

    r, _ = post(node3)
    assert r.status_code == 201, r.text
    c.partition_postgres(node3)
    try:
        # The first request meets the dark link: it must end (503), not hang on the kernel's
        # retransmissions. The ones after it are refused at once while the node retries.
        first, took = post(node3)
        assert first.status_code == 503, f"{first.status_code} {first.text[:300]} after {took:.1f} s"
        assert took < 30, f"the first write on the partitioned node took {took:.1f} s"
        answers = [(first, took)]

        def refused_at_once():
            answers.append(post(node3))
            return answers[-1][0].status_code == 503 and answers[-1][1] < 2
        unavailable = wait_for(refused_at_once, 30)
        last, last_took = answers[-1]
        err = last.json()["error"]
        assert unavailable and err["code"] == "UNAVAILABLE", (last.status_code, last.text)
        assert int(last.headers.get("Retry-After", "0")) >= 1, last.headers
        read = requests.get(f"{node3.base}/api/rooms/{room}/elements", headers=auth(writer), timeout=30)
        assert read.status_code == 503 and read.json()["error"]["code"] == "UNAVAILABLE", read.text[:300]
        assert int(read.headers.get("Retry-After", "0")) >= 1
        status, h = health(node3)
        assert status == 503 and h["status"] == "degraded" and h.get("database") == "unavailable", (status, h)
        # The others serve normally meanwhile.
        for node in c.nodes[:2]:
            ok, took_ok = post(node)
            assert ok.status_code == 201 and took_ok < 5, (node.name, ok.status_code, ok.text[:200], took_ok)
            assert health(node)[0] == 200
        partitioned_for = time.time()
        while time.time() - partitioned_for < max(0.0, PARTITION_S - took):
            time.sleep(0.25)
    finally:
        c.partition_postgres(node3, cut=False)
    healed = time.time()
    recovered = wait_for(lambda: post(node3)[0].status_code == 201, 45)
    back_after = time.time() - healed
    with capsys.disabled():
        print(f"\n[chaos] PostgreSQL partitioned from node 3: first write answered 503 after {took:.1f} s, "
              f"then 503 in {last_took * 1000:.0f} ms (Retry-After {last.headers.get('Retry-After')}); "
              f"writes served again {back_after:.1f} s after the heal")
    assert recovered, "node 3 did not serve writes again after PostgreSQL came back:\n" + c.logs()
    assert wait_health(node3, lambda h: h.get("status") == "ok", timeout=15)
    assert node3.proc.poll() is None and node3.proc.pid == pid, "node 3 was restarted"


# --- 4. a slow, stalling, resetting path between every node and Redis ------------------------------------------
def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] if values else float("nan")


@pytest.fixture(scope="module")
def through_relays(chaos):
    """Every node restarted with its Redis URL pointing at a ChaosProxy on this host (its upstream
    is this host's link to Redis)."""
    for n in chaos.nodes:
        chaos.restart_node(n, via_proxy=True)
    assert routed_again(chaos), "nginx does not route to every restarted node:\n" + chaos.logs()
    yield chaos
    for n in chaos.nodes:
        n.proxy.quiet()


def run_with_faults(c, capsys, prefix, scenario, configure):
    writer, room, clients = clients_on_every_node(c, prefix)
    writers = Writers(c, writer, room)
    writers.more(3)
    for n in c.nodes:
        n.proxy.stats = {k: 0 for k in n.proxy.stats}
        configure(n.proxy)
    started = time.time()
    while time.time() - started < FAULT_S:
        time.sleep(0.25)
    for n in c.nodes:
        n.proxy.quiet()
    writers.more(3)
    sent = writers.finish()
    wait_all_delivered(clients, sent, timeout=60)
    settle()
    rows = tally(clients, sent)
    latencies = [cl.arrivals[e] - writers.sent_at[e][1] for cl in clients for e in cl.arrivals
                 if e in writers.sent_at and writers.sent_at[e][0] != cl.node_index]
    stats = {n.name: {k: round(v, 1) for k, v in n.proxy.stats.items()} for n in c.nodes}
    extra = (f"cross-node delivery p50 {percentile(latencies, 50) * 1000:.0f} ms, p99 {percentile(latencies, 99) * 1000:.0f} ms, "
             f"max {max(latencies, default=0) * 1000:.0f} ms over {len(latencies)} deliveries; relays {stats}")
    report(capsys, scenario, rows, extra)
    assert not any(writers.refused.values()), writers.refused_summary()
    assert_once_in_origin_order(c, clients, sent, rows)
    return latencies, stats


def test_delay_and_stalls_between_nodes_and_redis_lose_and_repeat_nothing(through_relays, capsys):
    def configure(p):
        p.delay = 0.05
        p.stalls = (1.0, 3.0)
    latencies, stats = run_with_faults(through_relays, capsys, "d", f"50 ms each way + 1-3 s stalls on every node's Redis path for {FAULT_S:.0f} s", configure)
    assert all(s["stalls"] >= 1 for s in stats.values()), stats
    assert latencies and statistics.median(latencies) >= 0.1, "the relays' 2 x 50 ms did not show in delivery times"


def test_resets_between_nodes_and_redis_lose_and_repeat_nothing(through_relays, capsys):
    def configure(p):
        p.delay = 0.01
        p.resets = (2.0, 4.0)
    _, stats = run_with_faults(through_relays, capsys, "r", f"a relayed Redis connection reset (RST) every 2-4 s on every node for {FAULT_S:.0f} s", configure)
    assert sum(s["resets"] for s in stats.values()) >= 3, stats


# --- 5. every acknowledged write is in PostgreSQL -----------------------------------------------------------------
def test_every_acknowledged_write_is_in_postgresql(chaos, capsys):
    c = chaos
    ids = set().union(*(ids for _, ids in c.acked.values())) if c.acked else set()
    assert ids, "no write was acknowledged by the scenarios before"
    stored = set()
    rooms = list(c.acked)
    for i in range(0, len(rooms), 50):
        quoted = ",".join("'" + r.replace("'", "''") + "'" for r in rooms[i:i + 50])
        stored |= {row[0] for row in c.psql(f"SELECT id FROM elements WHERE room_id IN ({quoted})")}
    lost = ids - stored
    with capsys.disabled():
        print(f"\n[chaos] PostgreSQL holds {len(ids) - len(lost)} of the {len(ids)} acknowledged creates")
    assert not lost, f"{len(lost)} acknowledged creates are not in PostgreSQL: {sorted(lost)[:5]}"
