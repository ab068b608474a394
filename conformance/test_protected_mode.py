"""Protected mode over real sockets from a non-loopback address: a server started with
`--host 0.0.0.0` and no admin token answers the inspector and /metrics only to this machine.

The other address is a network namespace joined to this one by a veth pair: 10.201.N.1/30 on the
host end, 10.201.N.2/30 inside the namespace (N from the process id, so parallel runs do not
collide). Requests from 10.201.N.2 are made with curl inside the namespace (`ip netns exec`); the
server sees them from that TCP peer, exactly as from another machine. Nothing leaves this host:
the /30 exists only on the pair. The namespace (and with it the pair) is deleted afterwards.

Needs root and iproute2 (CI runs as root); otherwise it skips with the reason (`pytest -rs`).
"""
import json
import os
import shutil
import subprocess
import uuid

import pytest
import requests

from conftest import start_own_server, stop_own_server

IP = shutil.which("ip")
CURL = shutil.which("curl")


class Namespace:
    """A network namespace with one veth pair to this one: `host_ip` here, `inner_ip` in there."""

    def __init__(self):
        n = os.getpid() % 250 + 1
        tag = uuid.uuid4().hex[:5]
        self.name = f"tsprot-{tag}"
        self.host_if, self.inner_if = f"tsph{tag}", f"tspn{tag}"
        self.host_ip, self.inner_ip = f"10.201.{n}.1", f"10.201.{n}.2"

    def create(self):
        steps = [
            [IP, "netns", "add", self.name],
            [IP, "link", "add", self.host_if, "type", "veth", "peer", "name", self.inner_if],
            [IP, "link", "set", self.inner_if, "netns", self.name],
            [IP, "addr", "add", self.host_ip + "/30", "dev", self.host_if],
            [IP, "link", "set", self.host_if, "up"],
            [IP, "netns", "exec", self.name, IP, "addr", "add", self.inner_ip + "/30", "dev", self.inner_if],
            [IP, "netns", "exec", self.name, IP, "link", "set", self.inner_if, "up"],
            [IP, "netns", "exec", self.name, IP, "link", "set", "lo", "up"],
        ]
        for step in steps:
            r = subprocess.run(step, capture_output=True, text=True)
            if r.returncode != 0:
                return f"`{' '.join(step[1:])}` failed: {r.stderr.strip()}"
        return None

    def delete(self):
        subprocess.run([IP, "netns", "del", self.name], capture_output=True)  # takes the pair with it
        subprocess.run([IP, "link", "del", self.host_if], capture_output=True)  # in case the move failed

    def get(self, url, headers=None):
        """GET from inside the namespace: (status, parsed JSON body or text)."""
        return self.request("GET", url, headers)

    def request(self, method, url, headers=None, data=None):
        """`method` from inside the namespace, with `data` as the body: (status, parsed JSON body or text)."""
        cmd = [IP, "netns", "exec", self.name, CURL, "-s", "--max-time", "10", "-X", method, "-o", "-", "-w", "\n%{http_code}"]
        for k, v in (headers or {}).items():
            cmd += ["-H", f"{k}: {v}"]
        if data is not None:
            cmd += ["--data-binary", data]
        r = subprocess.run(cmd + [url], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, f"curl in the namespace failed ({r.returncode}): {r.stderr}"
        body, _, status = r.stdout.rpartition("\n")
        try:
            return int(status), json.loads(body)
        except ValueError:
            return int(status), body


@pytest.fixture(scope="module")
def netns():
    if IP is None or CURL is None:
        pytest.skip("protected-mode test skipped: needs iproute2 (ip) and curl")
    if os.geteuid() != 0:
        pytest.skip("protected-mode test skipped: creating a network namespace needs root (CI runs as root)")
    ns = Namespace()
    why = ns.create()
    if why:
        ns.delete()
        pytest.skip(f"protected-mode test skipped: cannot create a network namespace here: {why}")
    yield ns
    ns.delete()


def serve(env):
    """`serve --host 0.0.0.0 --demo`: every interface, as on the VPS."""
    return start_own_server(env, args=["--host", "0.0.0.0", "--demo"])


OPERATOR_PATHS = ["/inspector", "/inspector/api/browse/users", "/inspector/api/sockets", "/inspector/api/events",
                  "/inspector/api/demo", "/inspector/api/overview"]


@pytest.fixture(scope="module")
def protected(netns):
    """Demo mode, no admin token (the forgotten TOUCHSYNC_ENV=production), a local proxy trusted,
    /metrics with a scraper token."""
    server = serve({"TOUCHSYNC_SERVER_TRUSTED_PROXIES": "127.0.0.1", "TOUCHSYNC_METRICS_TOKEN": "scrape-token-1234"})
    yield server.base, server.base.replace("127.0.0.1", netns.host_ip), server.log_lines
    stop_own_server(server)


def test_another_address_gets_403_naming_the_admin_token(netns, protected):
    local, remote, _ = protected
    for path in OPERATOR_PATHS:
        status, body = netns.get(remote + path)
        assert status == 403, f"{path} from {netns.inner_ip}: {status} {body}"
        assert isinstance(body, dict) and body["error"]["code"] == "FORBIDDEN", body
        message = body["error"]["message"]
        assert "inspector.adminToken" in message and "TOUCHSYNC_INSPECTOR_ADMIN_TOKEN" in message, message
        assert netns.inner_ip in message, message
    # The Host header is the one the client chose: naming localhost does not help.
    status, _ = netns.get(remote + "/inspector/api/browse/users", headers={"Host": "localhost"})
    assert status == 403
    # The API itself is served to everyone.
    status, body = netns.get(remote + "/health")
    assert status == 200, body


def test_loopback_works_as_before(protected):
    local, _, _ = protected
    for path in OPERATOR_PATHS:
        r = requests.get(local + path, timeout=10)
        assert r.status_code == 200, f"{path}: {r.status_code} {r.text[:200]}"
    users = requests.get(local + "/inspector/api/browse/users", timeout=10).json()
    assert users["rows"], "the demo users are listed to this machine"
    assert requests.get(local + "/metrics", timeout=10).status_code == 200


def test_a_request_a_local_proxy_forwarded_for_someone_else_is_refused(protected):
    local, _, _ = protected
    # 127.0.0.1 is in server.trustedProxies: its X-Forwarded-For names the client.
    r = requests.get(local + "/inspector/api/sockets", headers={"X-Forwarded-For": "203.0.113.9"}, timeout=10)
    assert r.status_code == 403, r.text
    assert "203.0.113.9" in r.json()["error"]["message"]
    r = requests.get(local + "/inspector/api/sockets", headers={"X-Forwarded-For": "127.0.0.1"}, timeout=10)
    assert r.status_code == 200, "a local client through the local proxy"
    assert requests.get(local + "/metrics", headers={"X-Real-IP": "198.51.100.7"}, timeout=10).status_code == 403


def test_metrics_is_refused_to_another_address_unless_it_brings_the_token(netns, protected):
    _, remote, _ = protected
    status, body = netns.get(remote + "/metrics")
    assert status == 403, body
    assert "metrics.allowFrom" in body["error"]["message"] and "metrics.token" in body["error"]["message"], body
    status, body = netns.get(remote + "/metrics", headers={"Authorization": "Bearer scrape-token-1234"})
    assert status == 200 and "touchsync_build_info" in body, body
    status, body = netns.get(remote + "/metrics", headers={"Authorization": "Bearer wrong"})
    assert status == 401, body


def test_with_the_admin_token_and_allow_from_another_address_is_served(netns):
    server = serve({"TOUCHSYNC_INSPECTOR_ADMIN_TOKEN": "admin-token-abcdef-0123456789",
                    "TOUCHSYNC_METRICS_ALLOW_FROM": f"{netns.inner_ip}/32, 2001:db8::/32"})
    base = server.base
    try:
        remote = base.replace("127.0.0.1", netns.host_ip)
        status, body = netns.get(remote + "/inspector/api/browse/users", headers={"Authorization": "Bearer admin-token-abcdef-0123456789"})
        assert status == 200 and body["rows"], body
        status, _ = netns.get(remote + "/inspector/api/browse/users")
        assert status == 401, "with a token configured, a request without it is 401"
        status, body = netns.get(remote + "/metrics")
        assert status == 200 and "touchsync_build_info" in body, body
        # Loopback needs the token too once one is set (as before).
        assert requests.get(base + "/inspector/api/sockets", timeout=10).status_code == 401
    finally:
        stop_own_server(server)
