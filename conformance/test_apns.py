"""Push delivery to APNs (docs/apns.md) against a local HTTP/2 server playing
APNs: the python `h2` library (pinned in requirements.txt) over cleartext HTTP/2 with prior
knowledge (`apns.endpoint: http://…`, accepted for local tests only; Apple's hosts are https).

The fake answers by device token, like APNs would: 200, 410 Unregistered, 400 BadDeviceToken,
429 then 200, 503 for ever, 400 BadTopic, 403 ExpiredProviderToken then 200. The test checks each
request's path, headers and body, the provider token's ES256 signature (with the `openssl` CLI
and the key's public half) and claims, which devices were removed, and the /metrics counters.
"""
import base64
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import pytest
import requests

from conftest import ROOT

h2 = pytest.importorskip("h2.connection", reason="skipped: python h2 missing (pip install -r conformance/requirements.txt)")
import h2.config  # noqa: E402
import h2.events  # noqa: E402

OPENSSL = shutil.which("openssl")
needs_openssl = pytest.mark.skipif(OPENSSL is None, reason="skipped: the openssl CLI is missing (apt-get install -y openssl)")
BIN = os.environ.get("TOUCHSYNC_BIN") or os.path.join(ROOT, ".build", "debug", "touchsync")


class FakeAPNs:
    """An HTTP/2 (h2c, prior knowledge) server answering POST /3/device/<token> by the token's prefix."""

    def __init__(self, tls=None):
        self.tls = tls  # an ssl.SSLContext offering ALPN "h2", or None for cleartext prior knowledge
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.requests = []  # (path, headers, body) in arrival order
        self.seen = {}
        self.lock = threading.Lock()
        self.connections = 0
        threading.Thread(target=self.accept, daemon=True).start()

    def answer(self, token):
        with self.lock:
            n = self.seen[token] = self.seen.get(token, 0) + 1
        kind = token.split("-")[0]
        if kind == "good":
            return 200, None
        if kind == "gone":
            return 410, {"reason": "Unregistered", "timestamp": int(time.time() * 1000)}
        if kind == "bad":
            return 400, {"reason": "BadDeviceToken"}
        if kind == "busy":
            return (429, {"reason": "TooManyRequests"}) if n == 1 else (200, None)
        if kind == "down":
            return 503, {"reason": "ServiceUnavailable"}
        if kind == "topic":
            return 400, {"reason": "BadTopic"}
        if kind == "expired":
            return (403, {"reason": "ExpiredProviderToken"}) if n == 1 else (200, None)
        return 404, {"reason": "BadPath"}

    def accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def serve(self, conn):
        if self.tls:
            try:
                conn = self.tls.wrap_socket(conn, server_side=True)
            except (OSError, ValueError):
                return
            assert conn.selected_alpn_protocol() == "h2"
        c = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        c.initiate_connection()
        conn.sendall(c.data_to_send())
        streams = {}
        while True:
            try:
                data = conn.recv(65536)
            except OSError:
                return
            if not data:
                return
            for event in c.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    streams[event.stream_id] = [dict(event.headers), b""]
                elif isinstance(event, h2.events.DataReceived):
                    streams[event.stream_id][1] += event.data
                    c.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    headers, body = streams.pop(event.stream_id)
                    path = headers.get(":path", "")
                    with self.lock:
                        self.requests.append((path, headers, body))
                    status, reply = self.answer(path.rsplit("/", 1)[-1])
                    out = json.dumps(reply).encode() if reply else b""
                    response = [(":status", str(status)), ("apns-id", "6A1A4E3E-0000-4000-8000-000000000001")]
                    if out:
                        response += [("content-type", "application/json"), ("content-length", str(len(out)))]
                    c.send_headers(event.stream_id, response, end_stream=not out)
                    if out:
                        c.send_data(event.stream_id, out, end_stream=True)
            conn.sendall(c.data_to_send())

    def close(self):
        self.sock.close()


def b64url(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def der_signature(raw):
    """R‖S (64 bytes) → DER ECDSA-Sig-Value, for `openssl dgst -verify`."""
    def integer(b):
        b = b.lstrip(b"\x00") or b"\x00"
        if b[0] & 0x80:
            b = b"\x00" + b
        return b"\x02" + bytes([len(b)]) + b
    body = integer(raw[:32]) + integer(raw[32:])
    return b"\x30" + bytes([len(body)]) + body


def verify_es256(jwt, public_pem, tmp):
    header_b64, claims_b64, sig_b64 = jwt.split(".")
    msg, sig, pub = (os.path.join(tmp, n) for n in ("msg", "sig.der", "pub.pem"))
    open(msg, "wb").write(f"{header_b64}.{claims_b64}".encode())
    open(sig, "wb").write(der_signature(b64url(sig_b64)))
    open(pub, "w").write(public_pem)
    r = subprocess.run([OPENSSL, "dgst", "-sha256", "-verify", pub, "-signature", sig, msg], capture_output=True, text=True)
    return r.returncode == 0 and "Verified OK" in r.stdout


def start_server(env_extra, tmp):
    env = dict(os.environ)
    env.update({"TOUCHSYNC_AUTH_PASSWORD_ITERATIONS": "1000", "TOUCHSYNC_JWT_SECRET": "apns-test-secret-0123456789abcdef",
                "TOUCHSYNC_LOG_LEVEL": "info"})
    env.update(env_extra)
    proc = subprocess.Popen([BIN, "serve", "--test-mode", "--port", "0", "--database", os.path.join(tmp, "db.sqlite")], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines, base = [], None
    deadline = time.time() + 60
    while time.time() < deadline and base is None:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"TouchSync .* listening on (http://127\.0\.0\.1:\d+)", line)
        base = m.group(1) if m else None
    if base is None:
        proc.wait(timeout=10)
        return proc, None, lines
    threading.Thread(target=lambda: [lines.append(l) for l in proc.stdout], daemon=True).start()
    return proc, base, lines


@needs_openssl
@pytest.mark.parametrize("transport", ["tls", "h2c"])
def test_apns_delivery_headers_jwt_retries_and_device_removal(transport):
    import ssl
    tmp = tempfile.mkdtemp(prefix="touchsync-apns-")
    key = os.path.join(tmp, "AuthKey_ABC123DEFG.p8")
    subprocess.run([OPENSSL, "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key], check=True)
    public_pem = subprocess.run([OPENSSL, "pkey", "-in", key, "-pubout"], check=True, capture_output=True, text=True).stdout
    env = {"TOUCHSYNC_APNS_KEY_FILE": key, "TOUCHSYNC_APNS_KEY_ID": "ABC123DEFG", "TOUCHSYNC_APNS_TEAM_ID": "TEAM987654",
           "TOUCHSYNC_APNS_TOPIC": "com.example.touchsync", "TOUCHSYNC_APNS_MAX_RETRIES": "2", "TOUCHSYNC_APNS_RETRY_BASE_MS": "20"}
    if transport == "tls":
        # A self-signed certificate for 127.0.0.1, trusted through apns.caFile; HTTP/2 by ALPN as with Apple's hosts.
        cert, cert_key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "cert.key")
        subprocess.run([OPENSSL, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", cert_key,
                        "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                       check=True, capture_output=True)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, cert_key)
        ctx.set_alpn_protocols(["h2"])
        fake = FakeAPNs(tls=ctx)
        env.update({"TOUCHSYNC_APNS_ENDPOINT": f"https://127.0.0.1:{fake.port}", "TOUCHSYNC_APNS_CA_FILE": cert})
    else:
        fake = FakeAPNs()
        env["TOUCHSYNC_APNS_ENDPOINT"] = f"http://127.0.0.1:{fake.port}"
    proc, base, lines = start_server(env, tmp)
    assert base, "".join(lines)
    try:
        assert any("push notifications go to APNs" in l for l in lines), "".join(lines)
        fx = requests.post(base + "/api/test/fixtures", json={
            "users": [{"username": "alice", "password": "alice-password", "firstName": "Alice"},
                      {"username": "bob", "password": "bob-password", "firstName": "Bob"}],
            "rooms": [{"ref": "design", "name": "Design Team", "createdBy": "alice", "members": ["bob"]}],
            "elements": [{"ref": "kickoff", "room": "design", "createdBy": "alice", "type": "note"}],
            "devices": [{"user": "alice", "token": t, "platform": "ios"} for t in
                        ("good-1", "gone-1", "bad-1", "busy-1", "down-1", "topic-1", "expired-1")]
                       + [{"user": "alice", "token": "android-1", "platform": "android"}],
        }, headers={"X-TouchSync-Test": "1"}).json()["data"]
        bob = {"Authorization": "Bearer " + fx["users"]["bob"]["token"]}
        started = int(time.time())
        r = requests.post(base + f"/api/rooms/{fx['rooms']['design']}/elements/{fx['elements']['kickoff']}/reactions/toggle", headers=bob)
        assert r.status_code == 200, r.text

        # 7 iOS devices: busy and expired twice, down 1 + 2 retries = 11 requests.
        deadline = time.time() + 30
        while time.time() < deadline and len(fake.requests) < 11:
            time.sleep(0.05)
        time.sleep(0.3)  # nothing more should come
        tokens = [p.rsplit("/", 1)[-1] for p, _, _ in fake.requests]
        assert sorted(tokens) == sorted(["good-1", "gone-1", "bad-1", "busy-1", "busy-1", "down-1", "down-1", "down-1", "topic-1",
                                         "expired-1", "expired-1"]), tokens
        assert "android-1" not in tokens, "only iOS devices go to APNs"

        jwts = []
        for path, headers, body in fake.requests:
            assert headers[":method"] == "POST" and re.fullmatch(r"/3/device/[a-z]+-1", path), (path, headers)
            assert headers["apns-topic"] == "com.example.touchsync"
            assert headers["apns-push-type"] == "alert" and headers["apns-priority"] == "10"
            assert headers["content-type"] == "application/json"
            auth = headers["authorization"]
            assert auth.startswith("bearer ")
            jwt = auth[len("bearer "):]
            jwts.append((path, jwt))
            header = json.loads(b64url(jwt.split(".")[0]))
            claims = json.loads(b64url(jwt.split(".")[1]))
            assert header == {"alg": "ES256", "kid": "ABC123DEFG"}
            assert claims["iss"] == "TEAM987654" and started - 5 <= claims["iat"] <= time.time() + 5, claims
            assert len(b64url(jwt.split(".")[2])) == 64
            payload = json.loads(body)
            assert payload["aps"]["alert"]["body"] == "Bob hearted your element in Design Team", payload
            assert payload["type"] == "element_reaction" and payload["elementId"] == fx["elements"]["kickoff"]
        assert verify_es256(jwts[0][1], public_pem, tmp), "the JWT verifies with the key's public half"
        assert not verify_es256(jwts[0][1][:-4] + ("AAAA" if not jwts[0][1].endswith("AAAA") else "BBBB"), public_pem, tmp), "…and the check can fail"
        expired = [j for p, j in jwts if p.endswith("expired-1")]
        assert len(expired) == 2 and expired[0] != expired[1], "a new provider token after 403 ExpiredProviderToken"
        if transport == "tls":
            assert fake.connections == 1, "one HTTP/2 connection, reused for every request"

        # 410 Unregistered and 400 BadDeviceToken removed the device; nothing else was removed.
        deadline = time.time() + 5
        while time.time() < deadline:
            devices = requests.get(base + "/inspector/api/browse/devices?limit=50").json()["rows"]
            left = sorted(d["token"] for d in devices)
            if "gone-1" not in left and "bad-1" not in left:
                break
            time.sleep(0.05)
        assert left == ["android-1", "busy-1", "down-1", "expired-1", "good-1", "topic-1"], left

        metrics = requests.get(base + "/metrics").text
        def counter(outcome):
            m = re.search(r'^touchsync_apns_requests_total\{outcome="' + outcome + r'"\} (\d+)', metrics, re.M)
            return int(m.group(1)) if m else None
        assert {o: counter(o) for o in ("delivered", "unregistered", "bad_device_token", "rejected", "retried", "failed")} == \
            {"delivered": 3, "unregistered": 1, "bad_device_token": 1, "rejected": 1, "retried": 4, "failed": 1}, metrics
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        fake.close()


def test_apns_is_off_by_default_and_a_half_configuration_refuses_to_start():
    tmp = tempfile.mkdtemp(prefix="touchsync-apns-")
    proc, base, lines = start_server({}, tmp)
    try:
        assert base
        assert "touchsync_apns_requests_total" not in requests.get(base + "/metrics").text, "the log backend stays the default"
        assert not any("APNs" in l for l in lines)
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    key = os.path.join(tmp, "key.p8")
    open(key, "w").write("not a key")
    proc, base, lines = start_server({"TOUCHSYNC_APNS_KEY_FILE": key, "TOUCHSYNC_APNS_TEAM_ID": "T", "TOUCHSYNC_APNS_TOPIC": "x"}, tmp)
    assert base is None and proc.returncode != 0
    assert "apns.keyId" in "".join(lines), "".join(lines)
    proc, base, lines = start_server({"TOUCHSYNC_APNS_KEY_FILE": key, "TOUCHSYNC_APNS_KEY_ID": "K", "TOUCHSYNC_APNS_TEAM_ID": "T",
                                      "TOUCHSYNC_APNS_TOPIC": "x"}, tmp)
    assert base is None and proc.returncode != 0
    assert "apns.keyFile" in "".join(lines) and "PEM" in "".join(lines), "".join(lines)
