"""No network position is a credential: test mode, the demo accounts, /metrics and /health as an
operator meets them, from another address (a network namespace, test_protected_mode.Namespace) and
through nginx (Debian's binary, started here) with nothing but `proxy_pass` and `Host $host`:

- a `--test-mode --host 0.0.0.0` server on a file database (Docker, a CI service container) refuses
  every test route to another address unless it presents `testModeToken`;
- a web page's cross-site "simple" POST (`Origin` of another site, `text/plain`) cannot reset it;
- with `TOUCHSYNC_ENV=production`, /metrics needs its token even from loopback, so a local proxy that
  adds no forwarding header does not make every visitor a scraper;
- `--demo --host 0.0.0.0` does not accept the published `alice-password` from the network; the
  start-up text shows the random one of this start;
- /health shows error text and paths only to callers that may read /metrics.

Needs root, iproute2, curl and nginx (CI installs them); otherwise each part skips with the reason.
"""
import os
import re
import shutil
import socket
import subprocess
import tempfile

import pytest
import requests

from conftest import start_own_server, stop_own_server, wait_for
from test_protected_mode import netns  # noqa: F401 (the namespace fixture: a peer at another address)

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
TEST = {"X-TouchSync-Test": "1"}


def remote(server, ns):
    return server.base.replace("127.0.0.1", ns.host_ip)


def alice_is_there(server):
    """Whether alice (seeded below) can still log in, asked from this machine: a reset empties users."""
    r = requests.post(server.base + "/api/auth/login", json={"username": "alice", "password": "alice-password"}, timeout=10)
    return r.status_code == 200


@pytest.fixture(scope="module")
def test_mode_open(netns):
    server = start_own_server({}, args=["--test-mode", "--host", "0.0.0.0"])
    yield server
    stop_own_server(server)


def test_test_mode_without_a_token_refuses_another_address(netns, test_mode_open):
    server = test_mode_open
    seeded = requests.post(server.base + "/api/test/fixtures", json={"users": [{"username": "alice", "password": "alice-password"}]},
                           headers=TEST, timeout=10)
    assert seeded.status_code == 201, seeded.text
    base = remote(server, netns)
    for method, path, body in [("POST", "/api/test/reset", None),
                               ("POST", "/api/test/fixtures", '{"users":[{"username":"mallory","password":"mallory-pw"}]}'),
                               ("GET", "/api/test/events?since=0", None),
                               ("POST", "/api/test/faults", '{"action":"hold","userId":"x"}'),
                               ("GET", "/api/test/faults", None)]:
        headers = dict(TEST, **({"Content-Type": "application/json"} if body else {}))
        status, answer = netns.request(method, base + path, headers=headers, data=body)
        assert status == 403, f"{method} {path} from {netns.inner_ip}: {status} {answer}"
        assert "testModeToken" in answer["error"]["message"], answer
    # The header does not help and naming localhost does not either.
    status, _ = netns.request("POST", base + "/api/test/reset", headers=dict(TEST, Host="localhost"))
    assert status == 403
    assert alice_is_there(server), "nothing was reset from outside"
    # The app's API itself is served to everyone.
    status, _ = netns.get(base + "/health")
    assert status == 200


def test_a_cross_site_simple_request_cannot_reset_a_local_test_server(test_mode_open):
    server = test_mode_open
    assert alice_is_there(server)
    # What a page on https://evil.example can make a browser send without a preflight.
    r = requests.post(server.base + "/api/test/reset", data="{}", timeout=10,
                      headers={"Origin": "https://evil.example", "Content-Type": "text/plain"})
    assert r.status_code == 403, r.text
    r = requests.post(server.base + "/api/test/reset", data="{}", timeout=10,
                      headers={"Origin": "https://evil.example", "Content-Type": "text/plain", "X-TouchSync-Test": "1"})
    assert r.status_code == 403, "another site's Origin is refused even with the header"
    assert alice_is_there(server), "nothing was reset"


def test_with_a_token_a_remote_runner_works_and_nobody_else(netns):
    server = start_own_server({"TOUCHSYNC_TEST_MODE_TOKEN": "ci-runner-token-0123456789"}, args=["--test-mode", "--host", "0.0.0.0"])
    try:
        base = remote(server, netns)
        status, body = netns.request("POST", base + "/api/test/reset", headers={"X-TouchSync-Test": "ci-runner-token-0123456789"})
        assert status == 200, body
        status, body = netns.request("POST", base + "/api/test/fixtures", data='{"users":[{"username":"alice","password":"alice-pw-1"}]}',
                                     headers={"X-TouchSync-Test": "ci-runner-token-0123456789", "Content-Type": "application/json"})
        assert status == 201 and body["data"]["users"]["alice"]["token"], body
        status, body = netns.request("GET", base + "/api/test/events?since=0", headers={"X-TouchSync-Test": "guess"})
        assert status == 401, body
        status, body = netns.get(base + "/api/test/events?since=0")
        assert status == 401 and "X-TouchSync-Test" in body["error"]["message"], body
        # The token is the credential on this machine too.
        assert requests.get(server.base + "/api/test/events?since=0", timeout=10).status_code == 401
    finally:
        stop_own_server(server)


def test_demo_on_every_interface_does_not_accept_the_published_passwords(netns):
    server = start_own_server({}, args=["--demo", "--host", "0.0.0.0"])
    try:
        base = remote(server, netns)
        status, body = netns.request("POST", base + "/api/auth/login", headers={"Content-Type": "application/json"},
                                     data='{"username":"alice","password":"alice-password"}')
        assert status == 401, f"the published password from {netns.inner_ip}: {status} {body}"
        banner = "".join(server.log_lines)
        m = re.search(r"^\s+alice \(([0-9a-f]{24})\)$", banner, re.M)
        assert m, "the start-up text shows alice's random password:\n" + banner[-2000:]
        assert "random for this start" in banner
        status, body = netns.request("POST", base + "/api/auth/login", headers={"Content-Type": "application/json"},
                                     data='{"username":"alice","password":"%s"}' % m.group(1))
        assert status == 200 and body["data"]["token"], body
    finally:
        stop_own_server(server)


# --- nginx with only proxy_pass and Host ---------------------------------------------------------
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class BareProxy:
    """nginx forwarding to `upstream` with nothing but `proxy_pass` and `Host $host`: no
    X-Forwarded-For, no X-Real-IP. Every visitor reaches the server from 127.0.0.1."""

    def __init__(self, upstream):
        self.dir = tempfile.mkdtemp(prefix="touchsync-bare-proxy-")
        self.port = free_port()
        user = "user root;\n" if os.geteuid() == 0 else ""
        temp = "".join(f"    {k}_temp_path {self.dir}/{k}_temp;\n" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        with open(os.path.join(self.dir, "nginx.conf"), "w") as f:
            f.write(f"""{user}worker_processes 1;
daemon off;
pid {self.dir}/nginx.pid;
error_log {self.dir}/error.log info;
events {{ worker_connections 64; }}
http {{
    access_log {self.dir}/access.log;
{temp}    server {{
        listen 0.0.0.0:{self.port};
        location / {{
            proxy_pass {upstream};
            proxy_set_header Host $host;
        }}
    }}
}}
""")
        self.proc = subprocess.Popen([NGINX, "-p", self.dir, "-e", f"{self.dir}/error.log", "-c", f"{self.dir}/nginx.conf"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)

        def up():
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return True
            except OSError:
                return False
        assert wait_for(up, timeout=10), "nginx did not start: " + open(f"{self.dir}/error.log").read()[-2000:]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def production_behind_bare_proxy():
    if NGINX is None:
        pytest.skip("network-trust proxy test skipped: nginx is not installed (apt-get install -y nginx)")
    server = start_own_server({"TOUCHSYNC_ENV": "production", "TOUCHSYNC_METRICS_TOKEN": "scrape-token-0123456789"})
    proxy = BareProxy(server.base)
    yield server, proxy
    proxy.stop()
    stop_own_server(server)


def test_production_metrics_need_the_token_even_from_loopback(netns, production_behind_bare_proxy):
    server, proxy = production_behind_bare_proxy
    status, body = netns.get(f"http://{netns.host_ip}:{proxy.port}/metrics", headers={"Host": "touchsync.example"})
    assert status == 403, f"a remote visitor through the bare proxy: {status} {str(body)[:300]}"
    assert "metrics.token" in body["error"]["message"], body
    r = requests.get(server.base + "/metrics", timeout=10)
    assert r.status_code == 403, "loopback itself is no credential in production"
    r = requests.get(server.base + "/metrics", headers={"Authorization": "Bearer scrape-token-0123456789"}, timeout=10)
    assert r.status_code == 200 and "touchsync_build_info" in r.text
    # The inspector is not served at all in production without its admin token.
    status, _ = netns.get(f"http://{netns.host_ip}:{proxy.port}/inspector/api/browse/users")
    assert status == 404


def test_health_shows_details_only_to_metrics_callers(netns):
    backups = tempfile.mkdtemp(prefix="touchsync-health-backups-")
    server = start_own_server({"TOUCHSYNC_BACKUP_DIRECTORY": backups}, args=["--host", "0.0.0.0"])
    try:
        local = requests.get(server.base + "/health", timeout=10).json()
        assert backups in str(local), f"this machine sees the backup's details: {local}"
        status, body = netns.get(remote(server, netns) + "/health")
        assert status == 200 and body["status"] in ("ok", "degraded"), body
        assert backups not in str(body), f"another address sees no paths: {body}"
    finally:
        stop_own_server(server)
        shutil.rmtree(backups, ignore_errors=True)
