"""Test mode against a cluster (docs/test-mode.md "Against a cluster"): three `touchsync serve
--test-mode` nodes on one PostgreSQL and one Redis (clusterlib.Cluster), and a fourth node without
test mode on the same database and Redis. A reset or a fixtures load sent to one node reaches every
test-mode node over Redis before it is answered; the node without test mode ignores it.

Sockets are python-socketio clients connected to each node directly (no reconnection, so a
disconnect stays visible). Missing PostgreSQL, Redis or nginx skips the module with the reason.
"""
import concurrent.futures
import os
import time

import pytest
import requests
import socketio

from conftest import wait_for

import clusterlib

# Never beside another test (scripts/test runs the `serial` ones in their own phase): four nodes on the shared
# PostgreSQL and Redis: one cluster at a time (docs/testing.md, "Parallel conformance").
pytestmark = pytest.mark.serial

FIXTURES = {
    "users": [{"username": "alice", "password": "alice-password"}, {"username": "bob", "password": "bob-password"}],
    "rooms": [{"ref": "design", "createdBy": "alice", "members": ["bob"]}],
    "elements": [{"ref": "kickoff", "room": "design", "createdBy": "alice", "type": "note", "content": "hello"}],
}


@pytest.fixture(scope="module")
def cluster():
    c = clusterlib.start_or_skip("cluster test-mode test", test_mode=True)
    try:
        # A fourth node on the same database and Redis, without test mode (not behind nginx).
        c.production = clusterlib.Node(4, clusterlib.free_port(), os.path.join(c.tmp, "node4.log"), test_mode=False)
        c.nodes.append(c.production)   # so stop() ends it too
        c.start_node(c.production)
    except BaseException:
        c.stop()
        raise
    c.clients = []
    yield c
    for client in c.clients:
        client.disconnect()
    c.stop()


def test_mode_nodes(c):
    return c.nodes[:3]
test_mode_nodes.__test__ = False


def reset(c, node, expect_nodes=3, timeout=10.0):
    """POST /api/test/reset on `node` until every test-mode node takes part: a node learns of the
    others from their heartbeats (one a second), so right after the start it may know fewer."""
    answers = []

    def all_nodes():
        r = requests.post(node.base + "/api/test/reset", timeout=15, headers={"X-TouchSync-Test": "1"})
        assert r.status_code == 200, r.text
        answers.append(r.json()["data"])
        return answers[-1]["nodes"] == expect_nodes
    assert wait_for(all_nodes, timeout=timeout, interval=0.2), f"nodes seen: {[a['nodes'] for a in answers]}\n" + c.logs()
    return answers[-1]


def load(node, doc=FIXTURES):
    r = requests.post(node.base + "/api/test/fixtures", json=doc, timeout=15, headers={"X-TouchSync-Test": "1"})
    assert r.status_code == 201, r.text
    return r.json()["data"]


def events(node, **query):
    r = requests.get(node.base + "/api/test/events", params=query, timeout=40)
    assert r.status_code == 200, r.text
    return r.json()["data"]


def connect(c, node, token):
    sio = socketio.Client(reconnection=False)
    sio.connect(node.base, auth={"token": token}, wait_timeout=15)
    c.clients.append(sio)
    return sio


def ignored_resets(node):
    with open(node.log_path) as f:
        return f.read().count("ignored a test-mode test-sync")


def create_element(node, token, room, content):
    body = {"type": "note", "content": content, "positionX": 1, "positionY": 2, "width": 100, "height": 50}
    r = requests.post(f"{node.base}/api/rooms/{room}/elements", json=body, headers={"Authorization": "Bearer " + token}, timeout=15)
    assert r.status_code == 201, r.text
    return r.json()["data"]["id"]


def test_a_reset_sent_to_one_node_disconnects_the_sockets_of_every_test_mode_node(cluster):
    n1, n2, n3 = test_mode_nodes(cluster)
    reset(cluster, n1)
    fx = load(n1)
    alice = fx["users"]["alice"]["token"]
    on2, on3 = connect(cluster, n2, alice), connect(cluster, n3, alice)
    on_production = connect(cluster, cluster.production, alice)
    assert on2.connected and on3.connected and on_production.connected
    ignored = ignored_resets(cluster.production)

    answer = requests.post(n1.base + "/api/test/reset", timeout=15, headers={"X-TouchSync-Test": "1"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"]["nodes"] == 3
    assert wait_for(lambda: not on2.connected and not on3.connected, timeout=10), "a socket on node 2 or 3 survived the reset"
    # The node without test mode read the same message, said it ignores it, and kept its socket.
    assert wait_for(lambda: ignored_resets(cluster.production) > ignored, timeout=10), \
        clusterlib.tail(cluster.production.log_path)
    assert on_production.connected


def test_after_a_reset_every_node_s_event_log_is_empty_and_continues_after_the_same_number(cluster):
    n1, n2, n3 = test_mode_nodes(cluster)
    reset(cluster, n1)
    fx = load(n2)
    alice, room = fx["users"]["alice"]["token"], fx["rooms"]["design"]
    create_element(n2, alice, room, "before the reset")
    # Every node logs every room event (it broadcasts each to its own sockets).
    for node in (n1, n2, n3):
        assert events(node, since=0, event="element:created", wait="5s")["events"], f"{node.name} logged no element:created"

    answer = requests.post(n3.base + "/api/test/reset", timeout=15, headers={"X-TouchSync-Test": "1"})
    assert answer.status_code == 200, answer.text
    data = answer.json()["data"]
    assert data["nodes"] == 3
    # Answered only once every node had applied it: nothing is left, and all continue after one number.
    for node in (n1, n2, n3):
        page = events(node, since=0)
        assert page["events"] == [], f"{node.name}: {page['events']}"
        assert page["lastSequence"] == data["lastEventSequence"], node.name


def test_fixtures_loaded_through_one_node_are_usable_through_another(cluster):
    n1, n2, n3 = test_mode_nodes(cluster)
    reset(cluster, n2)
    fx = load(n1)
    alice = fx["users"]["alice"]
    me = requests.get(n3.base + "/api/auth/me", headers={"Authorization": "Bearer " + alice["token"]}, timeout=10)
    assert me.status_code == 200, me.text
    assert me.json()["data"]["username"] == "alice"
    login = requests.post(n3.base + "/api/auth/login", json={"username": "bob", "password": "bob-password"}, timeout=10)
    assert login.status_code == 200, login.text
    rooms = requests.get(n3.base + "/api/rooms/my-rooms", headers={"Authorization": "Bearer " + login.json()["data"]["token"]}, timeout=10)
    assert rooms.status_code == 200, rooms.text
    assert fx["rooms"]["design"] in rooms.text
    # The fixtures' events are logged on every node before the answer, after the same number.
    for node in (n1, n2, n3):
        page = events(node, since=fx["lastEventSequence"])
        assert page["events"] == [] and page["lastSequence"] == fx["lastEventSequence"], f"{node.name}: {page}"


def test_an_event_caused_on_node_2_is_found_by_a_long_poll_on_node_1_and_node_3(cluster):
    n1, n2, n3 = test_mode_nodes(cluster)
    reset(cluster, n1)
    fx = load(n1)
    since, alice, room = fx["lastEventSequence"], fx["users"]["alice"]["token"], fx["rooms"]["design"]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        # Whether a long-poll reaches its node before or after the write, it finds the event.
        waits = [pool.submit(events, node, since=since, event="element:created", wait="10s") for node in (n1, n3)]
        element = create_element(n2, alice, room, "written on node 2")
        pages = [f.result(timeout=30) for f in waits]
    for node, page in zip((n1, n3), pages):
        found = [e for e in page["events"] if e["payload"]["element"]["id"] == element]
        assert len(found) == 1, f"{node.name}: {page}"
        assert found[0]["recipients"] == 0   # nobody listens on that node


def test_the_node_without_test_mode_has_no_test_routes_and_is_not_waited_for(cluster):
    n1 = test_mode_nodes(cluster)[0]
    assert requests.post(cluster.production.base + "/api/test/reset", timeout=10, headers={"X-TouchSync-Test": "1"}).status_code == 404
    # It sends no heartbeats, so a reset counts and waits for the three test-mode nodes only.
    assert reset(cluster, n1)["nodes"] == 3


def test_a_live_node_that_does_not_confirm_is_named_in_a_504_after_a_bounded_wait(cluster):
    n1, n2, n3 = test_mode_nodes(cluster)
    reset(cluster, n1)
    # Node 3 reaches Redis through the test's relay: cut it, and node 3 neither hears the reset nor
    # answers, while node 1 still counts it alive (heard within the last 3 s).
    cluster.proxy.cut()
    try:
        started = time.monotonic()
        r = requests.post(n1.base + "/api/test/reset", timeout=30, headers={"X-TouchSync-Test": "1"})
        waited = time.monotonic() - started
        assert r.status_code == 504, r.text
        error = r.json()["error"]
        assert error["code"] == "CLUSTER_TIMEOUT"
        assert f"pid {n3.proc.pid}" in error["message"], error["message"]
        assert f"pid {n2.proc.pid}" not in error["message"], error["message"]
        assert waited < 10, f"the reset waited {waited:.1f} s"
    finally:
        cluster.proxy.heal()
    # Once node 3 is back (its link reconnects with backoff), resets reach all three again.
    assert reset(cluster, n1, timeout=20)["nodes"] == 3


def test_moving_the_clock_on_one_node_moves_every_test_mode_node_and_a_token_expires_everywhere(cluster):
    c = cluster
    reset(c, c.nodes[0])
    alice = load(c.nodes[0])["users"]["alice"]
    for node in test_mode_nodes(c):
        r = requests.get(node.base + "/api/auth/me", headers={"Authorization": "Bearer " + alice["token"]}, timeout=10)
        assert r.status_code == 200, (node.base, r.text)
    # 31 days on node 2: the answer comes once every test-mode node has moved (a 504 names a node that did not).
    r = requests.post(c.nodes[1].base + "/api/test/clock", json={"advance": "31d"}, timeout=15, headers={"X-TouchSync-Test": "1"})
    assert r.status_code == 200, r.text
    assert r.json()["data"]["offsetSeconds"] == 31 * 86_400, r.text
    try:
        for node in test_mode_nodes(c):
            state = requests.get(node.base + "/api/test/clock", timeout=10).json()["data"]
            assert state["offsetSeconds"] == 31 * 86_400 and state["moved"], (node.base, state)
            # The 30-day token has expired on every node, not only on the one that was asked.
            r = requests.get(node.base + "/api/auth/me", headers={"Authorization": "Bearer " + alice["token"]}, timeout=10)
            assert r.status_code == 401, (node.base, r.text)
        # The node without test mode has no clock route, and its time did not move.
        assert requests.get(c.production.base + "/api/test/clock", timeout=10).status_code == 404
    finally:
        # A reset puts every node's clock back.
        reset(c, c.nodes[2])
    for node in test_mode_nodes(c):
        state = requests.get(node.base + "/api/test/clock", timeout=10).json()["data"]
        assert state["offsetSeconds"] == 0 and not state["moved"], (node.base, state)
