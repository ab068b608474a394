"""A local TouchSync cluster for conformance/test_cluster.py: PostgreSQL (a fresh
database on the throw-away server scripts/services.sh started), our own Redis on a free port (so a
test may kill and restart it; append-only file fsynced on every write, so a restart keeps every
entry Redis answered), three `touchsync serve` nodes and nginx running deploy/nginx/touchsync.conf,
all in one temporary directory that is removed afterwards. The last node reaches Redis through a
TCP relay of the test's own (`TcpProxy`), which a test may cut or slow down.

Each piece that is missing is named by `Cluster.missing()`, and the test module skips with it.
"""
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
import uuid

import requests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NGINX_SITE = os.path.join(ROOT, "deploy", "nginx", "touchsync.conf")
NODES = 3
JWT_SECRET = "cluster-secret-0123456789abcdef0123456789"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def tail(path, lines=40):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return f"({path}: {e})"


def find_tool(name, *candidates):
    found = shutil.which(name)
    if found:
        return found
    for c in candidates:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def postgres_bin(tool):
    for d in sorted(os.listdir("/usr/lib/postgresql"), reverse=True) if os.path.isdir("/usr/lib/postgresql") else []:
        p = os.path.join("/usr/lib/postgresql", d, "bin", tool)
        if os.access(p, os.X_OK):
            return p
    return shutil.which(tool)


def spawn_node(node, args, cwd, env):
    """Starts `args` as `node` (output appended to its log) and waits until its /health answers;
    fails with the log's tail if it exits or does not answer within 60 s."""
    log = open(node.log_path, "a")
    node.proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    deadline = time.time() + 60
    while time.time() < deadline:
        if node.proc.poll() is not None:
            break
        try:
            if requests.get(node.base + "/health", timeout=2).status_code in (200, 503):
                return
        except requests.RequestException:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{node.name} did not start (exit {node.proc.poll()}):\n" + tail(node.log_path))


class TcpProxy:
    """A TCP relay between one node and Redis. `cut()` closes every relayed connection and refuses
    new ones (accepted and closed at once) until `heal()`; `delay` holds every chunk that long
    before passing it on, in both directions, in order (a slow link, not a slow Redis)."""

    def __init__(self, target_port, listen_host="127.0.0.1", target_host="127.0.0.1"):
        self.target_port = target_port
        self.target_host = target_host
        self.delay = 0.0
        self.refusing = False
        self.lock = threading.Lock()
        self.sockets = set()
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((listen_host, 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closed:
            try:
                down, _ = self.listener.accept()
            except OSError:
                return
            if self.refusing:
                down.close()
                continue
            try:
                up = socket.create_connection((self.target_host, self.target_port), timeout=5)
                up.settimeout(None)
            except OSError:
                down.close()
                continue
            with self.lock:
                self.sockets.update((down, up))
            for src, dst in ((down, up), (up, down)):
                q = queue.Queue()
                threading.Thread(target=self._read, args=(src, dst, q), daemon=True).start()
                threading.Thread(target=self._write, args=(src, dst, q), daemon=True).start()

    def _read(self, src, dst, q):
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            q.put((time.monotonic(), data))
            if not data:
                return

    def _write(self, src, dst, q):
        while True:
            at, data = q.get()
            wait = at + self.delay - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            try:
                if not data:
                    raise OSError("closed")
                dst.sendall(data)
            except OSError:
                for s in (src, dst):
                    self._close(s)
                return

    def _close(self, s):
        with self.lock:
            self.sockets.discard(s)
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()

    def cut(self):
        self.refusing = True
        with self.lock:
            live = list(self.sockets)
        for s in live:
            self._close(s)

    def heal(self):
        self.refusing = False

    def close(self):
        self.closed = True
        self.cut()
        self.listener.close()


def start_or_skip(label, **kwargs):
    """A started Cluster(**kwargs) for a test module, or pytest.skip naming what is missing (`label`
    starts the message); a warning when the nodes share SQLite instead of PostgreSQL."""
    import warnings
    import pytest
    c = Cluster(**kwargs)
    reason = c.missing()
    if reason:
        pytest.skip(f"{label}: {reason}")
    if c.storage_note:
        warnings.warn(UserWarning(f"{label}: {c.storage_note}"))
    try:
        c.start()
    except BaseException:
        c.stop()
        raise
    return c


class Node:
    def __init__(self, index, port, log_path, test_mode=None):
        self.index = index          # 1-based, as in deploy/nginx/touchsync.conf (node1 … node3)
        self.port = port
        self.log_path = log_path
        self.proc = None
        self.test_mode = test_mode  # None: as the cluster says (Cluster.test_mode)

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    @property
    def name(self):
        return f"node{self.index}"


class Cluster:
    """Everything the cluster test needs. `start()` brings it up; `stop()` ends every process it
    started (by pid) and removes the temporary directory."""

    def __init__(self, test_mode=False):
        self.binary = os.environ.get("TOUCHSYNC_BIN") or os.path.join(ROOT, ".build", "debug", "touchsync")
        self.test_mode = test_mode     # start the nodes with `serve --test-mode`
        self.tmp = None
        self.storage = None            # "postgresql" or "sqlite-shared"
        self.storage_note = None       # why not PostgreSQL, when not
        self.database_url = None
        self.pg_admin_url = None
        self.redis_port = None
        self.redis_proc = None
        self.nginx_proc = None
        self.nginx_port = None
        self.nodes = []
        self.proxy = None              # TcpProxy between the last node and Redis

    # --- what is missing --------------------------------------------------------------------
    def missing(self):
        """Why the cluster cannot run here, or None."""
        reasons = []
        if not os.access(self.binary, os.X_OK):
            reasons.append(f"no touchsync binary at {self.binary} (TOUCHSYNC_BIN)")
            return "; ".join(reasons)
        help_text = subprocess.run([self.binary, "serve", "--help"], capture_output=True, text=True).stdout
        if "--redis-url" not in help_text:
            reasons.append("this touchsync build has no `serve --redis-url` (Redis fan-out)")
        self.redis_server = find_tool("redis-server", "/usr/bin/redis-server")
        if not self.redis_server:
            reasons.append("Redis is not installed (apt-get install -y redis-server)")
        self.nginx = find_tool("nginx", "/usr/sbin/nginx")
        if not self.nginx:
            reasons.append("nginx is not installed (apt-get install -y nginx)")
        pg_url = os.environ.get("TOUCHSYNC_TEST_POSTGRES_URL")
        if "--database-url" in help_text and pg_url and postgres_bin("psql"):
            self.storage = "postgresql"
            self.pg_admin_url = pg_url
        elif os.environ.get("TOUCHSYNC_CLUSTER_SQLITE") == "1" or "--database-url" not in help_text:
            # Three processes on one SQLite file (WAL works across processes): asked for, or a build
            # without the PostgreSQL backend. The fixture warns, so it shows in the test summary.
            self.storage = "sqlite-shared"
            self.storage_note = ("TOUCHSYNC_CLUSTER_SQLITE=1" if os.environ.get("TOUCHSYNC_CLUSTER_SQLITE") == "1"
                                 else "this touchsync build has no `serve --database-url`") + \
                ": the three nodes share one SQLite file instead of PostgreSQL"
        elif not pg_url:
            reasons.append("no PostgreSQL server: TOUCHSYNC_TEST_POSTGRES_URL is unset ("
                           + os.environ.get("TOUCHSYNC_TEST_SERVICES_SKIPPED", "scripts/test starts one with scripts/services.sh") + ")")
        else:
            reasons.append("psql is not installed (apt-get install -y postgresql)")
        return "; ".join(reasons) or None

    # --- start / stop -------------------------------------------------------------------------
    def start(self):
        self.tmp = tempfile.mkdtemp(prefix="touchsync-cluster-")
        if self.storage == "postgresql":
            self._create_database()
        else:
            self.database_url = None
        self.redis_port = free_port()
        self.start_redis()
        self.proxy = TcpProxy(self.redis_port)
        ports = set()
        while len(ports) < NODES + 1:
            ports.add(free_port())
        ports = sorted(ports)
        self.nginx_port = ports.pop()
        self.nodes = [Node(i + 1, ports[i], os.path.join(self.tmp, f"node{i + 1}.log")) for i in range(NODES)]
        # Node 1 first: it applies the migrations to the fresh database, then the others join.
        self.start_node(self.nodes[0])
        for n in self.nodes[1:]:
            self.start_node(n)
        self.start_nginx()

    def stop(self):
        for n in self.nodes:
            self._end(n.proc, signal.SIGTERM)
        self._end(self.nginx_proc, signal.SIGQUIT)
        self._end(self.redis_proc, signal.SIGTERM)
        if self.proxy:
            self.proxy.close()
        if self.storage == "postgresql" and self.database_url:
            self._psql(f'DROP DATABASE IF EXISTS "{self.database_name}" WITH (FORCE)', check=False)
        # TOUCHSYNC_CLUSTER_KEEP_LOGS=1 keeps the nodes' logs (and nginx's) for a failure's post-mortem.
        if self.tmp and not os.environ.get("TOUCHSYNC_CLUSTER_KEEP_LOGS"):
            shutil.rmtree(self.tmp, ignore_errors=True)

    @staticmethod
    def _end(proc, sig):
        if proc is None or proc.poll() is not None:
            return
        try:
            proc.send_signal(sig)
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)

    # --- PostgreSQL -----------------------------------------------------------------------------
    def _psql(self, sql, check=True):
        u = urllib.parse.urlparse(self.pg_admin_url)
        cmd = [postgres_bin("psql"), "-h", u.hostname or "127.0.0.1", "-p", str(u.port or 5432),
               "-U", u.username or "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-qc", sql]
        env = dict(os.environ)
        if u.password:
            env["PGPASSWORD"] = u.password
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
        if check and r.returncode != 0:
            raise RuntimeError(f"psql {sql!r} failed: {r.stderr}")
        return r

    def _create_database(self):
        self.database_name = "cluster_" + uuid.uuid4().hex[:12]
        self._psql(f'CREATE DATABASE "{self.database_name}"')
        u = urllib.parse.urlparse(self.pg_admin_url)
        self.database_url = urllib.parse.urlunparse(u._replace(path="/" + self.database_name))

    # --- Redis ------------------------------------------------------------------------------------
    def start_redis(self):
        d = os.path.join(self.tmp, "redis")
        os.makedirs(d, exist_ok=True)
        log = open(os.path.join(d, "redis.log"), "a")
        self.redis_proc = subprocess.Popen(
            [self.redis_server, "--port", str(self.redis_port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "yes", "--appendfsync", "always", "--dir", d], stdout=log, stderr=subprocess.STDOUT)
        log.close()
        assert wait_port(self.redis_port, 10), "redis-server did not start:\n" + tail(os.path.join(d, "redis.log"))

    def kill_redis(self):
        self.redis_proc.kill()
        self.redis_proc.wait(timeout=10)

    @property
    def redis_url(self):
        return f"redis://127.0.0.1:{self.redis_port}"

    def redis_url_for(self, node):
        """The last node goes through the proxy; the others straight to Redis."""
        if self.proxy and node.index == NODES:
            return f"redis://127.0.0.1:{self.proxy.port}"
        return self.redis_url

    # --- nodes --------------------------------------------------------------------------------------
    def node_env(self):
        env = dict(os.environ)
        env.update({
            "TOUCHSYNC_AUTH_PASSWORD_ITERATIONS": "1000",
            "TOUCHSYNC_JWT_SECRET": JWT_SECRET,
            # Every socket reaches a node from nginx's address (127.0.0.1): no per-address cap.
            "TOUCHSYNC_SERVER_MAX_CONNECTIONS_PER_ADDRESS": "0",
            # and no per-address sign-up throttle: every account is registered from there too.
            "TOUCHSYNC_LIMITS_SIGN_UPS_PER_HOUR": "0",
            "TOUCHSYNC_REALTIME_MAX_UNCONNECTED_SESSIONS_PER_ADDRESS": "0",
            "TOUCHSYNC_LOG_LEVEL": "info",
            # The test's Python clients share one GIL with the writers: let a client fall behind
            # by more than the default 1 MiB without being dropped as a slow consumer (the test
            # is about the cluster losing nothing, not about slow consumers).
            "TOUCHSYNC_REALTIME_MAX_OUTBOUND_BYTES_PER_SOCKET": str(64 << 20),
            # For the same reason a client can be that far behind when a ping reaches it: the pong
            # waits behind thousands of events its thread has yet to handle. On a loaded machine
            # that took more than the default 20 s and the node dropped a healthy client for a ping
            # timeout (the ping interval stays 25 s, which nginx's read timeout is set against).
            "TOUCHSYNC_REALTIME_PING_TIMEOUT_MS": "60000",
        })
        env.pop("TOUCHSYNC_TEST_POSTGRES_URL", None)
        return env

    def start_node(self, node):
        args = [self.binary, "serve", "--host", "127.0.0.1", "--port", str(node.port), "--redis-url", self.redis_url_for(node)]
        if self.storage == "postgresql":
            args += ["--database-url", self.database_url]
        else:
            args += ["--database", os.path.join(self.tmp, "shared.sqlite")]
        if self.test_mode if node.test_mode is None else node.test_mode:
            args.append("--test-mode")
        spawn_node(node, args, self.tmp, self.node_env())

    def kill_node(self, node):
        node.proc.send_signal(signal.SIGKILL)
        node.proc.wait(timeout=10)

    # --- nginx ----------------------------------------------------------------------------------------
    def site_config(self):
        """deploy/nginx/touchsync.conf with the three local nodes' addresses and nginx's port."""
        with open(NGINX_SITE) as f:
            conf = f.read()
        for n in self.nodes:
            default_port = 3000 + n.index
            for old, new in [(f"touchsync{n.index}:{default_port}", f"127.0.0.1:{n.port}"),
                             (f'"~:{default_port}$"', f'"~:{n.port}$"')]:
                assert old in conf, f"deploy/nginx/touchsync.conf no longer names {old}"
                conf = conf.replace(old, new)
        assert "listen 80;" in conf, "deploy/nginx/touchsync.conf no longer has `listen 80;`"
        return conf.replace("listen 80;", f"listen 127.0.0.1:{self.nginx_port};")

    def start_nginx(self):
        d = os.path.join(self.tmp, "nginx")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "touchsync.conf"), "w") as f:
            f.write(self.site_config())
        # As root nginx's workers would drop to `nobody`, who cannot write this 0700 directory.
        user = "user root;\n" if os.geteuid() == 0 else ""
        temp = "".join(f"    {k}_temp_path {d}/{k}_temp;\n" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        with open(os.path.join(d, "nginx.conf"), "w") as f:
            f.write(f"""{user}worker_processes 1;
daemon off;
pid {d}/nginx.pid;
error_log {d}/error.log info;
events {{ worker_connections 4096; }}
http {{
    access_log {d}/access.log;
{temp}    include {d}/touchsync.conf;
}}
""")
        check = subprocess.run([self.nginx, "-t", "-p", d, "-e", f"{d}/error.log", "-c", f"{d}/nginx.conf"],
                               capture_output=True, text=True)
        assert check.returncode == 0, "nginx -t refused the generated config:\n" + check.stderr
        self.nginx_proc = subprocess.Popen([self.nginx, "-p", d, "-e", f"{d}/error.log", "-c", f"{d}/nginx.conf"],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        assert wait_port(self.nginx_port, 10), "nginx did not start:\n" + tail(f"{d}/error.log")

    @property
    def base(self):
        """nginx: the address clients use."""
        return f"http://127.0.0.1:{self.nginx_port}"

    def logs(self):
        out = []
        for n in self.nodes:
            out.append(f"--- {n.name} ({n.log_path}) ---\n" + tail(n.log_path, 25))
        out.append("--- nginx error.log ---\n" + tail(os.path.join(self.tmp, "nginx", "error.log"), 25))
        return "\n".join(out)
