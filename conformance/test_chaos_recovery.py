"""Chaos with connection state recovery on (docs/realtime-cluster.md, "Connection state recovery
across nodes"): the cluster of conformance/test_chaos.py (each node in a network namespace of its
own, nginx in front), started with realtime.connectionStateRecovery on. A module of its own: the
setting changes what every event carries, and two such clusters cannot run at once.

Needs what conformance/test_chaos.py needs; otherwise the module skips with the reason (`pytest -rs`).
"""
import pytest

from conftest import wait_for
from recoverylib import RecoveringClient
from test_chaos import Writers, assert_once_in_origin_order, clients_on_every_node, report, settle, started_cluster, tally, \
    wait_all_delivered

# Never beside another test (scripts/test runs the `serial` ones in their own phase): the chaos cluster of
# test_chaos.py (network namespaces, three nodes, nginx): one cluster at a time (docs/testing.md, "Parallel
# conformance").
pytestmark = pytest.mark.serial


@pytest.fixture(scope="module")
def chaos_recovering():
    yield from started_cluster({"TOUCHSYNC_REALTIME_CONNECTION_STATE_RECOVERY_MAX_DISCONNECTION_DURATION": "60000"})


def test_node_killed_behind_nginx_with_recovery_on_its_clients_recover_elsewhere_and_miss_nothing(chaos_recovering, capsys):
    c = chaos_recovering
    node3 = c.nodes[2]
    def recovering(user, k, room):
        cl = RecoveringClient(c.base, user["token"], room, f"node{k}")
        cl.node_index = k
        return cl
    writer, room, clients = clients_on_every_node(c, "r", make=recovering)
    on3 = [cl for cl in clients if cl.node_index == 3]
    writers = Writers(c, writer, room, nodes=[1, 2, 3])
    writers.more(5)
    c.kill_node(node3)
    assert wait_for(lambda: all(cl.connects >= 2 for cl in on3), 30), "a client of the killed node did not reconnect through nginx:\n" + c.logs()
    writers.more(10, nodes=[1, 2])
    # Counted: every create the live nodes acknowledged, from the start (node 3's own may be lost
    # with it before reaching Redis: docs/realtime-cluster.md, "Connection state recovery across nodes").
    sent = {k: v for k, v in writers.finish().items() if k != 3}
    wait_all_delivered(clients, sent)
    settle()
    rows = tally(clients, sent)
    report(capsys, "node 3 killed (SIGKILL) behind nginx, recovery on; counted: every create of nodes 1 and 2", rows,
           f"recovered {sum(cl.recoveries for cl in on3)} of {len(on3)}, fresh {sum(cl.fresh for cl in on3)}")
    # A restore needs the dead node's delivery journal to reach the client's last offset. Its last
    # journal writes are pipelined, not awaited, so SIGKILL can lose them; the survivor then gives a
    # fresh session rather than guess (docs/realtime-cluster.md, "A journal write lost"), and the
    # client catches up through the join's batch. Any other reason for a fresh session fails.
    for cl in on3:
        assert cl.recoveries + cl.fresh == 1, "a client of node 3 reconnected more than once\n" + c.logs()
    fresh = sum(cl.fresh for cl in on3)
    if fresh:
        refusals = sum(open(n.log_path, errors="replace").read().count("journal ends before the client's last offset")
                       for n in c.nodes[:2])
        assert refusals >= fresh, f"{fresh} client(s) of node 3 got a fresh session, {refusals} for a lost journal tail:\n" + c.logs()
    assert_once_in_origin_order(c, clients, sent, rows)
