"""A TouchSync cluster spread over network namespaces, for conformance/test_chaos.py and
bench/chaos-catchup.py: PostgreSQL, Redis and each of three `touchsync serve` nodes in a namespace
of its own, joined by veth pairs, so that a fault is a real link going away rather than a process
or a relay of ours going quiet.

    host (this process: python-socketio clients, REST writers, nginx, the fault-injecting relays)
      |-- front link --> node1 | node2 | node3      (clients and nginx reach a node here)
      |-- link --------> redis, pg                   (relays' upstream, psql for checks)
    nodeK -- own link --> redis                      (partition: that link's far end goes down)
    nodeK -- own link --> pg

Point-to-point links rather than one bridge: "Redis is cut off from node 3, everything else is
fine" is then `ip link set <redis end of node 3's link> down` and nothing else. Setting the FAR end
down leaves node 3's end up without carrier: its routes stay and the kernel drops what it sends
(a black hole, as when a switch or cable dies), instead of answering "network unreachable" at once.

Each namespace has its own ports, so every node listens on 300K as in deploy/nginx/touchsync.conf,
Redis on 6379 and PostgreSQL on 5432. PostgreSQL is a cluster of our own (initdb in the temporary
directory, run as the `postgres` user when we are root, since it refuses to run as root).

`ChaosProxy` is `clusterlib.TcpProxy` with the link's faults added: a delay both ways, random
stalls (a direction holds everything for 1–3 s, as a congested or flapping path does) and resets
(a relayed connection is ended with RST). It listens on this host's front address, so a node can be
started with its Redis URL pointing at it.

Needs root and iproute2; `ChaosCluster.missing()` names what is not there and the tests skip with it.
"""
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import uuid

import clusterlib
from clusterlib import TcpProxy, find_tool, postgres_bin, tail

IP = shutil.which("ip")
NODES = 3
REDIS_PORT = 6379
PG_PORT = 5432
ADMIN_TOKEN = "chaos-admin-token-0123456789abcdef"


def run(cmd, check=True, timeout=60):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` failed ({r.returncode}): {r.stderr.strip()}")
    return r


class Net:
    """Namespaces and the veth pairs between them; `None` is this (the host's) namespace.
    Interface names carry a random tag (15 characters at most, the kernel's limit), addresses a
    second octet from the process id, so two runs on one machine do not collide."""

    def __init__(self):
        self.tag = uuid.uuid4().hex[:4]
        self.octet = 20 + os.getpid() % 180
        self.namespaces = []
        self.host_ifs = []
        self.links = 0

    def ns_name(self, role):
        return f"tsc{self.tag}-{role}"

    def add(self, role):
        name = self.ns_name(role)
        run([IP, "netns", "add", name])
        self.namespaces.append(name)
        run([IP, "-n", name, "link", "set", "lo", "up"])
        return name

    def link(self, a, b):
        """A /24 on a new veth pair between namespaces a and b (None = host): the pair's
        (a_ip, b_ip, a_if, b_if)."""
        self.links += 1
        k = self.links
        a_if, b_if = f"tc{self.tag}{k}a", f"tc{self.tag}{k}b"
        a_ip, b_ip = f"10.{self.octet}.{k}.1", f"10.{self.octet}.{k}.2"
        run([IP, "link", "add", a_if, "type", "veth", "peer", "name", b_if])
        for ns, ifname, addr in ((a, a_if, a_ip), (b, b_if, b_ip)):
            if ns is None:
                self.host_ifs.append(ifname)
                pre = [IP]
            else:
                run([IP, "link", "set", ifname, "netns", ns])
                pre = [IP, "-n", ns]
            run(pre + ["addr", "add", addr + "/24", "dev", ifname])
            run(pre + ["link", "set", ifname, "up"])
        return a_ip, b_ip, a_if, b_if

    @staticmethod
    def set_link(ns, ifname, up):
        run(([IP, "-n", ns] if ns else [IP]) + ["link", "set", ifname, "up" if up else "down"])

    @staticmethod
    def exec_prefix(ns):
        return [IP, "netns", "exec", ns]

    def delete(self):
        for ns in self.namespaces:
            run([IP, "netns", "del", ns], check=False)   # takes its ends of the pairs with it
        for ifname in self.host_ifs:
            run([IP, "link", "del", ifname], check=False)


class ChaosProxy(TcpProxy):
    """TcpProxy listening on `listen_host` (any port) and relaying to target_host:target_port, with
    the link's faults: `delay` (seconds, each way, as in TcpProxy), `stalls` ((min, max) seconds:
    while set, now and then every direction holds its bytes that long, a congested or flapping
    path) and `resets` ((min, max) seconds between two relayed connections ended with RST on the
    node's side). Counts what it did in `stats`."""

    def __init__(self, listen_host, target_host, target_port):
        self.base_delay = 0.0
        self.stall_until = 0.0
        self.stalls = None
        self.resets = None
        self.stats = {"stalls": 0, "stalled_s": 0.0, "resets": 0}
        self.rng = random.Random(int(os.environ.get("TOUCHSYNC_CHAOS_SEED", "0")) or None)
        super().__init__(target_port, listen_host=listen_host, target_host=target_host)
        threading.Thread(target=self._faults, daemon=True).start()

    # TcpProxy holds each chunk `delay` after it was read; during a stall that is until the stall
    # ends (what was read before it waits too: each direction writes in order).
    @property
    def delay(self):
        return self.base_delay + max(0.0, self.stall_until - time.monotonic())

    @delay.setter
    def delay(self, seconds):
        self.base_delay = seconds

    def _faults(self):
        next_stall = next_reset = 0.0
        while not self.closed:
            now = time.monotonic()
            if self.stalls and now >= next_stall and now >= self.stall_until:
                length = self.rng.uniform(*self.stalls)
                self.stall_until = now + length
                self.stats["stalls"] += 1
                self.stats["stalled_s"] += length
                next_stall = self.stall_until + self.rng.uniform(1.0, 4.0)
            if self.resets and now >= next_reset:
                if next_reset:
                    self.reset_one()
                next_reset = now + self.rng.uniform(*self.resets)
            time.sleep(0.05)

    def reset_one(self):
        """Ends one relayed connection with RST to the node (SO_LINGER 0, then close); the relay's
        other half then closes the Redis side. False when none is open."""
        with self.lock:
            node_side = [s for s in self.sockets if _local_port(s) == self.port]
        if not node_side:
            return False
        s = self.rng.choice(node_side)
        with self.lock:
            self.sockets.discard(s)
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.shutdown(socket.SHUT_RD)   # wakes the relay's reader; sends nothing
        except OSError:
            pass
        s.close()                        # linger 0: RST
        self.stats["resets"] += 1
        return True

    def quiet(self):
        """No more faults: no delay, no stall, no reset."""
        self.delay = 0.0
        self.stalls = None
        self.resets = None
        self.stall_until = 0.0


def _local_port(s):
    try:
        return s.getsockname()[1]
    except OSError:
        return None


class Node:
    def __init__(self, index, ns, front_ip, host_front_ip, redis_ip, pg_ip, log_path):
        self.index = index
        self.ns = ns
        self.ip = front_ip              # where clients, nginx and the test reach it
        self.host_ip = host_front_ip    # this host's end of the front link (where a relay listens)
        self.redis_ip = redis_ip        # Redis's end of this node's own link
        self.pg_ip = pg_ip              # PostgreSQL's end of this node's own link
        self.redis_if = None            # (namespace, interface) of the far ends, for partitions
        self.pg_if = None
        self.port = 3000 + index
        self.log_path = log_path
        self.proc = None
        self.proxy = None               # ChaosProxy to Redis, when started through one

    @property
    def base(self):
        return f"http://{self.ip}:{self.port}"

    @property
    def name(self):
        return f"node{self.index}"


class ChaosCluster:
    """PostgreSQL, Redis and three nodes in namespaces, nginx here. `start()` / `stop()`."""

    def __init__(self, extra_env=None):
        self.binary = os.environ.get("TOUCHSYNC_BIN") or os.path.join(clusterlib.ROOT, ".build", "debug", "touchsync")
        self.extra_env = dict(extra_env or {})
        self.net = None
        self.tmp = None
        self.nodes = []
        self.redis_proc = None
        self.nginx_proc = None
        self.nginx_port = None
        self.pg_bin = None
        self.pg_started = False

    def missing(self):
        """Why this cannot run here, or None."""
        if IP is None:
            return "iproute2 (`ip`) is not installed"
        if os.geteuid() != 0:
            return "network namespaces need root (CI runs as root)"
        if not os.access(self.binary, os.X_OK):
            return f"no touchsync binary at {self.binary} (TOUCHSYNC_BIN)"
        help_text = run([self.binary, "serve", "--help"], check=False).stdout
        if "--redis-url" not in help_text or "--database-url" not in help_text:
            return "this touchsync build has no `serve --redis-url` / `--database-url`"
        self.redis_server = find_tool("redis-server", "/usr/bin/redis-server")
        if not self.redis_server:
            return "Redis is not installed (apt-get install -y redis-server)"
        self.nginx = find_tool("nginx", "/usr/sbin/nginx")
        if not self.nginx:
            return "nginx is not installed (apt-get install -y nginx)"
        initdb = postgres_bin("initdb")
        if not initdb or not postgres_bin("pg_ctl"):
            return "PostgreSQL's initdb/pg_ctl are not installed (apt-get install -y postgresql)"
        self.pg_bin = os.path.dirname(initdb)
        if run(["id", "postgres"], check=False).returncode != 0:
            return "there is no `postgres` user to run PostgreSQL as (Debian's postgresql package creates it)"
        probe = f"tscprobe{uuid.uuid4().hex[:4]}"
        r = run([IP, "netns", "add", probe], check=False)
        run([IP, "netns", "del", probe], check=False)
        if r.returncode != 0:
            return f"cannot create a network namespace here: {r.stderr.strip()}"
        return None

    # --- start / stop ---------------------------------------------------------------------------
    def start(self, nodes_via_proxy=False):
        self.tmp = tempfile.mkdtemp(prefix="touchsync-chaos-")
        os.chmod(self.tmp, 0o755)
        self.net = Net()
        redis_ns, pg_ns = self.net.add("redis"), self.net.add("pg")
        self.redis_ns, self.pg_ns = redis_ns, pg_ns
        _, self.redis_host_ip, _, _ = self.net.link(None, redis_ns)
        _, self.pg_host_ip, _, _ = self.net.link(None, pg_ns)
        for i in range(1, NODES + 1):
            ns = self.net.add(f"n{i}")
            host_ip, front_ip, _, _ = self.net.link(None, ns)
            _, r_ip, _, r_far = self.net.link(ns, redis_ns)
            _, p_ip, _, p_far = self.net.link(ns, pg_ns)
            node = Node(i, ns, front_ip, host_ip, r_ip, p_ip, os.path.join(self.tmp, f"node{i}.log"))
            node.redis_if, node.pg_if = (redis_ns, r_far), (pg_ns, p_far)
            self.nodes.append(node)
        self.start_redis()
        self.start_postgres()
        for n in self.nodes:           # node 1 first: it applies the migrations
            if nodes_via_proxy:
                n.proxy = ChaosProxy(n.host_ip, self.redis_host_ip, REDIS_PORT)
            self.start_node(n)
        self.nginx_port = clusterlib.free_port()
        self.start_nginx()

    def stop(self):
        for n in self.nodes:
            clusterlib.Cluster._end(n.proc, signal.SIGTERM)
            if n.proxy:
                n.proxy.close()
        clusterlib.Cluster._end(self.nginx_proc, signal.SIGQUIT)
        clusterlib.Cluster._end(self.redis_proc, signal.SIGTERM)
        if self.pg_started:
            self._as_postgres([os.path.join(self.pg_bin, "pg_ctl"), "-D", self.pg_data, "-m", "immediate", "-w", "stop"], check=False)
        if self.net:
            self.net.delete()
        if self.tmp and os.environ.get("TOUCHSYNC_CHAOS_KEEP") != "1":
            shutil.rmtree(self.tmp, ignore_errors=True)

    # --- Redis and PostgreSQL, each in its namespace ----------------------------------------------
    def start_redis(self):
        d = os.path.join(self.tmp, "redis")
        os.makedirs(d, exist_ok=True)
        log = open(os.path.join(d, "redis.log"), "a")
        self.redis_proc = subprocess.Popen(
            self.net.exec_prefix(self.redis_ns) + [self.redis_server, "--port", str(REDIS_PORT), "--bind", "0.0.0.0",
                                                   "--protected-mode", "no", "--save", "", "--appendonly", "yes",
                                                   "--appendfsync", "always", "--dir", d],
            stdout=log, stderr=subprocess.STDOUT)
        log.close()
        assert wait_tcp(self.redis_host_ip, REDIS_PORT, 10), "redis-server did not start:\n" + tail(os.path.join(d, "redis.log"))

    def kill_redis(self):
        self.redis_proc.kill()
        self.redis_proc.wait(timeout=10)

    def _as_postgres(self, cmd, check=True, ns=None):
        return run((self.net.exec_prefix(ns) if ns else []) + ["runuser", "-u", "postgres", "--"] + cmd, check=check, timeout=120)

    def start_postgres(self):
        d = os.path.join(self.tmp, "pg")
        os.makedirs(d)
        shutil.chown(d, "postgres")
        self.pg_data = os.path.join(d, "data")
        initdb = os.path.join(self.pg_bin, "initdb")
        r = self._as_postgres([initdb, "-D", self.pg_data, "-U", "touchsync", "--auth=trust", "-E", "UTF8", "--locale=C", "-N"], check=False)
        assert r.returncode == 0, "initdb failed: " + r.stderr
        with open(os.path.join(self.pg_data, "pg_hba.conf"), "a") as f:
            f.write(f"host all all 10.{self.net.octet}.0.0/16 trust\n")
        # fsync off: a throw-away cluster; durability here means "committed before acknowledged",
        # which the check at the end reads back from this very server.
        self._as_postgres([os.path.join(self.pg_bin, "pg_ctl"), "-D", self.pg_data, "-l", os.path.join(d, "server.log"),
                           "-w", "-t", "60", "-o", f"-p {PG_PORT} -k {d} -c listen_addresses=* -c max_connections=200 "
                           "-c fsync=off -c shared_buffers=32MB", "start"], ns=self.pg_ns)
        self.pg_started = True
        self.psql("CREATE DATABASE touchsync", database="postgres")

    def psql(self, sql, database="touchsync"):
        """Runs sql through this host's link to PostgreSQL; the rows, tab-separated."""
        r = run([os.path.join(self.pg_bin, "psql"), "-h", self.pg_host_ip, "-p", str(PG_PORT), "-U", "touchsync", "-d", database,
                 "-v", "ON_ERROR_STOP=1", "-AtF", "\t", "-c", sql])
        return [line.split("\t") for line in r.stdout.splitlines() if line]

    def database_url(self, node):
        return f"postgres://touchsync@{node.pg_ip}:{PG_PORT}/touchsync"

    def redis_url(self, node):
        if node.proxy:
            return f"redis://{node.host_ip}:{node.proxy.port}"
        return f"redis://{node.redis_ip}:{REDIS_PORT}"

    # --- partitions: the far end of a node's own link goes down (a black hole on its side) ----------
    def partition_redis(self, node, cut=True):
        Net.set_link(*node.redis_if, up=not cut)

    def partition_postgres(self, node, cut=True):
        Net.set_link(*node.pg_if, up=not cut)

    # --- nodes ----------------------------------------------------------------------------------------
    def node_env(self):
        env = dict(os.environ)
        env.update({
            "TOUCHSYNC_AUTH_PASSWORD_ITERATIONS": "1000",
            "TOUCHSYNC_JWT_SECRET": clusterlib.JWT_SECRET,
            "TOUCHSYNC_SERVER_MAX_CONNECTIONS_PER_ADDRESS": "0",
            # and no per-address sign-up throttle: every account is registered from there too.
            "TOUCHSYNC_LIMITS_SIGN_UPS_PER_HOUR": "0",
            "TOUCHSYNC_REALTIME_MAX_UNCONNECTED_SESSIONS_PER_ADDRESS": "0",
            "TOUCHSYNC_LOG_LEVEL": "info",
            # The nodes listen on every interface of their namespace: the inspector (which tells
            # the test where a socket is) answers another address only with the admin token.
            "TOUCHSYNC_INSPECTOR_ADMIN_TOKEN": ADMIN_TOKEN,
            "TOUCHSYNC_METRICS_TOKEN": ADMIN_TOKEN,
            "TOUCHSYNC_REALTIME_MAX_OUTBOUND_BYTES_PER_SOCKET": str(64 << 20),
            # A room's later events wait this long for a missing number before delivery gives up
            # its order (docs/realtime-cluster.md, "Order across nodes"): above the longest
            # partition or stall here, so every room stays in commit order through them.
            "TOUCHSYNC_REALTIME_GAP_WAIT": os.environ.get("TOUCHSYNC_CHAOS_GAP_WAIT", "15s"),
        })
        env.pop("TOUCHSYNC_TEST_POSTGRES_URL", None)
        env.update(self.extra_env)
        return env

    def start_node(self, node):
        args = self.net.exec_prefix(node.ns) + [self.binary, "serve", "--host", "0.0.0.0", "--port", str(node.port),
                                                "--redis-url", self.redis_url(node), "--database-url", self.database_url(node)]
        clusterlib.spawn_node(node, args, self.tmp, self.node_env())

    def kill_node(self, node):
        node.proc.send_signal(signal.SIGKILL)   # `ip netns exec` execs the server: this is its pid
        node.proc.wait(timeout=10)

    def restart_node(self, node, via_proxy):
        clusterlib.Cluster._end(node.proc, signal.SIGTERM)
        if node.proxy:
            node.proxy.close()
            node.proxy = None
        if via_proxy:
            node.proxy = ChaosProxy(node.host_ip, self.redis_host_ip, REDIS_PORT)
        self.start_node(node)

    # --- nginx, here, in front of the nodes' front addresses --------------------------------------------
    def site_config(self):
        with open(clusterlib.NGINX_SITE) as f:
            conf = f.read()
        for n in self.nodes:
            old = f"touchsync{n.index}:{n.port}"
            assert old in conf, f"deploy/nginx/touchsync.conf no longer names {old}"
            conf = conf.replace(old, f"{n.ip}:{n.port}")
        assert "listen 80;" in conf
        return conf.replace("listen 80;", f"listen 127.0.0.1:{self.nginx_port};")

    # clusterlib's: nginx here, on 127.0.0.1:nginx_port, running `site_config()` (the front addresses).
    start_nginx = clusterlib.Cluster.start_nginx

    @property
    def base(self):
        return f"http://127.0.0.1:{self.nginx_port}"

    def logs(self, lines=25):
        out = [f"--- {n.name} ({n.log_path}) ---\n" + tail(n.log_path, lines) for n in self.nodes]
        out.append("--- nginx error.log ---\n" + tail(os.path.join(self.tmp, "nginx", "error.log"), lines))
        return "\n".join(out)


def wait_tcp(host, port, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False
