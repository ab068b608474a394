"""The `touchsync` binary as an operator uses it: version, migrate, token, refusals with a
clear message, and durability of answered writes across `kill -9`."""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import requests

from conftest import ROOT

BIN = os.environ.get("TOUCHSYNC_BIN") or os.path.join(ROOT, ".build", "debug", "touchsync")
BASE_ENV = {"TOUCHSYNC_AUTH_PASSWORD_ITERATIONS": "1000", "TOUCHSYNC_JWT_SECRET": "cli-test-secret-0123456789abcdef"}


def run(*args, env=None, timeout=60):
    e = dict(os.environ)
    e.update(BASE_ENV)
    e.update(env or {})
    return subprocess.run([BIN, *args], cwd=ROOT, env=e, capture_output=True, text=True, timeout=timeout)


def start(db, env=None):
    e = dict(os.environ)
    e.update(BASE_ENV)
    e.update(env or {})
    proc = subprocess.Popen([BIN, "serve", "--port", "0", "--database", db], cwd=ROOT, env=e,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 60
    out = []
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        out.append(line)
        m = re.search(r"TouchSync .* listening on (http://127\.0\.0\.1:\d+)", line)
        if m:
            return proc, m.group(1)
    proc.kill()
    raise AssertionError("server did not start:\n" + "".join(out))


def test_version():
    r = run("version")
    assert r.returncode == 0 and re.match(r"touchsync \d+\.\d+\.\d+", r.stdout)


def test_migrate_token_and_checksum_refusal():
    tmp = tempfile.mkdtemp()
    migrations = os.path.join(tmp, "Migrations")
    shutil.copytree(os.path.join(ROOT, "Migrations"), migrations)
    db = os.path.join(tmp, "db.sqlite")
    env = {"TOUCHSYNC_MIGRATIONS_DIR": migrations}
    r = run("migrate", "--database", db, env=env)
    assert r.returncode == 0, r.stderr
    # A user, then a token for them from the CLI that the server accepts.
    proc, base = start(db, env)
    try:
        reg = requests.post(base + "/api/auth/register", json={"username": "cliuser", "password": "password-123"})
        assert reg.status_code == 201
    finally:
        proc.terminate()
        assert proc.wait(timeout=15) == 0
    tok = run("token", "cliuser", "--expires", "1h", "--database", db, env=env)
    assert tok.returncode == 0, tok.stderr
    token = tok.stdout.strip().splitlines()[-1]
    proc, base = start(db, env)
    try:
        me = requests.get(base + "/api/auth/me", headers={"Authorization": "Bearer " + token})
        assert me.status_code == 200 and me.json()["data"]["username"] == "cliuser"
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    missing = run("token", "nobody", "--database", db, env=env)
    assert "no user named nobody" in (missing.stdout + missing.stderr)

    # Editing an applied migration stops the start with a message naming the file.
    first = sorted(f for f in os.listdir(migrations) if f.endswith(".sql"))[0]
    with open(os.path.join(migrations, first), "a") as f:
        f.write("\n-- edited after it was applied\n")
    r = run("serve", "--port", "0", "--database", db, env=env, timeout=30)
    assert r.returncode != 0
    assert first in (r.stdout + r.stderr), r.stdout + r.stderr


def test_production_without_secret_refuses_to_start():
    tmp = tempfile.mkdtemp()
    e = dict(os.environ)
    e.pop("TOUCHSYNC_JWT_SECRET", None)
    e["TOUCHSYNC_ENV"] = "production"
    r = subprocess.run([BIN, "serve", "--port", "0", "--database", os.path.join(tmp, "db.sqlite")], cwd=ROOT, env=e,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0
    assert "TOUCHSYNC_JWT_SECRET" in (r.stdout + r.stderr)


def test_answered_writes_survive_kill_9():
    tmp = tempfile.mkdtemp()
    db = os.path.join(tmp, "db.sqlite")
    proc, base = start(db)
    answered = []
    try:
        reg = requests.post(base + "/api/auth/register", json={"username": "durable", "password": "password-123"}).json()["data"]
        h = {"Authorization": "Bearer " + reg["token"]}
        room = requests.post(base + "/api/rooms", json={}, headers=h).json()["data"]["id"]
        for i in range(60):
            r = requests.post(base + f"/api/rooms/{room}/elements", headers=h,
                              json={"type": "note", "positionX": i, "positionY": 0, "width": 1, "height": 1})
            assert r.status_code == 201
            answered.append(r.json()["data"]["id"])
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=15)
    proc, base = start(db)
    try:
        login = requests.post(base + "/api/auth/login", json={"username": "durable", "password": "password-123"})
        assert login.status_code == 200
        h = {"Authorization": "Bearer " + login.json()["data"]["token"]}
        elements = requests.get(base + f"/api/rooms/{room}/elements", headers=h).json()["data"]
        assert [e["id"] for e in elements] == answered
        rooms = requests.get(base + "/api/rooms/my-rooms", headers=h).json()["data"]
        assert rooms[0]["elementCount"] == len(answered)
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def test_answered_toggles_survive_kill_9_across_wal_checkpoints():
    """Every toggle answered 2xx is in the database after `kill -9`, also while the WAL is being
    copied into the database by the background checkpointer and started over by the writer (small
    bounds, so both happen many times during the run)."""
    import threading
    tmp = tempfile.mkdtemp()
    db = os.path.join(tmp, "db.sqlite")
    env = {"TOUCHSYNC_LIMITS_ENABLED": "false", "TOUCHSYNC_LOG_LEVEL": "warning",
           "TOUCHSYNC_DATABASE_WAL_AUTOCHECKPOINT_PAGES": "8", "TOUCHSYNC_DATABASE_WAL_MAX_BYTES": "1048576"}
    proc, base = start(db, env)
    users = []
    state = {}  # (element, user index) -> hearted, as the last 2xx answer said
    lock = threading.Lock()
    answered = [0]
    unsure = set()  # (element, user) whose toggle was in flight at the kill: either outcome is right
    stop = threading.Event()
    threads = []
    try:
        for i in range(4):
            reg = requests.post(base + "/api/auth/register", json={"username": f"toggler{i}", "password": "password-123"}).json()["data"]
            users.append({"Authorization": "Bearer " + reg["token"], "id": reg["user"]["id"]})
        room = requests.post(base + "/api/rooms", json={"memberIds": [u["id"] for u in users[1:]]},
                             headers={"Authorization": users[0]["Authorization"]}).json()["data"]["id"]
        elements = []
        for i in range(30):
            r = requests.post(base + f"/api/rooms/{room}/elements", headers={"Authorization": users[0]["Authorization"]},
                              json={"type": "note", "positionX": i, "positionY": 0, "width": 1, "height": 1})
            assert r.status_code == 201
            elements.append(r.json()["data"]["id"])

        def toggler(u):
            s = requests.Session()
            h = {"Authorization": users[u]["Authorization"]}
            n = 0
            while not stop.is_set():
                e = elements[(n * 7 + u * 3) % len(elements)]
                n += 1
                with lock:
                    unsure.add((e, u))
                try:
                    r = s.post(base + f"/api/rooms/{room}/elements/{e}/reactions/toggle", headers=h, timeout=30)
                except requests.RequestException:
                    return  # the server was killed mid-request
                assert r.status_code == 200, r.text
                with lock:
                    state[(e, u)] = r.json()["data"]["action"] == "added"
                    unsure.discard((e, u))
                    answered[0] += 1
        threads += [threading.Thread(target=toggler, args=(u,)) for u in range(len(users))]
        for t in threads:
            t.start()
        deadline = time.time() + 120
        while answered[0] < 400 and time.time() < deadline and all(t.is_alive() for t in threads):
            time.sleep(0.01)
        assert answered[0] >= 400, f"only {answered[0]} toggles answered"
    finally:
        proc.send_signal(signal.SIGKILL)  # while the togglers are still sending
        proc.wait(timeout=15)
    stop.set()
    for t in threads:
        t.join(timeout=30)
    assert len(state) > 0
    proc, base = start(db, env)
    try:
        for u in range(len(users)):
            login = requests.post(base + "/api/auth/login", json={"username": f"toggler{u}", "password": "password-123"})
            h = {"Authorization": "Bearer " + login.json()["data"]["token"]}
            listed = {e["id"]: e for e in requests.get(base + f"/api/rooms/{room}/elements", headers=h).json()["data"]}
            for (e, who), hearted in state.items():
                if who == u and (e, who) not in unsure:
                    stats = listed[e]["reactions"] or {"hasReacted": False}
                    assert stats["hasReacted"] == hearted, f"element {e}, user {u}: answered {hearted}, stored {stats}"
        for e in elements:
            if any(el == e for (el, _) in unsure):
                continue
            expected = sum(1 for (el, _), hearted in state.items() if el == e and hearted)
            count = listed[e]["reactions"]["count"] if listed[e]["reactions"] else 0
            assert count == expected, f"element {e}: {expected} hearts answered, {count} stored"
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def test_websocket_origin_allow_list():
    """`realtime.allowedOrigins` refuses a browser WebSocket from another origin (403); CORS on polling
    follows `realtime.corsAllowedOrigins`."""
    import websocket
    tmp = tempfile.mkdtemp()
    proc, base = start(os.path.join(tmp, "db.sqlite"), {"TOUCHSYNC_REALTIME_ALLOWED_ORIGINS": "https://good.example",
                                                         "TOUCHSYNC_REALTIME_CORS_ALLOWED_ORIGINS": "https://good.example"})
    try:
        url = base.replace("http", "ws") + "/socket.io/?EIO=4&transport=websocket"
        ok = websocket.create_connection(url, origin="https://good.example", timeout=5)
        assert ok.recv().startswith("0{")
        ok.close()
        native = websocket.create_connection(url, suppress_origin=True, timeout=5)
        assert native.recv().startswith("0{"), "a native client sends no Origin and is allowed"
        native.close()
        try:
            websocket.create_connection(url, origin="https://evil.example", timeout=5)
            assert False, "a foreign origin must be refused"
        except websocket.WebSocketBadStatusException as e:
            assert e.status_code == 403
        r = requests.get(base + "/socket.io/?EIO=4&transport=polling", headers={"Origin": "https://good.example"})
        assert r.headers.get("Access-Control-Allow-Origin") == "https://good.example"
        r = requests.get(base + "/socket.io/?EIO=4&transport=polling", headers={"Origin": "https://evil.example"})
        assert "Access-Control-Allow-Origin" not in r.headers
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def start_collecting(args, env=None, until=None, timeout=60):
    """Starts `touchsync serve --port 0 …args`, pumps its output into a list on a thread, and waits
    for the listening line (and then for `until(lines)` if given)."""
    import threading
    e = dict(os.environ)
    e.update(BASE_ENV)
    e.update(env or {})
    e = {k: v for k, v in e.items() if v is not None}  # None removes a variable
    proc = subprocess.Popen([BIN, "serve", "--port", "0", *args], cwd=ROOT, env=e,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []

    def pump():
        for l in proc.stdout:
            lines.append(l)
    threading.Thread(target=pump, daemon=True).start()
    deadline = time.time() + timeout
    base = None
    while time.time() < deadline and proc.poll() is None:
        for l in list(lines):
            m = re.search(r"TouchSync .* listening on (http://127\.0\.0\.1:\d+)", l)
            if m:
                base = m.group(1)
        if base and (until is None or until(lines)):
            return proc, base, lines
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("server did not start:\n" + "".join(lines))


def test_demo_start_prints_what_a_person_needs_and_the_tokens_work():
    """`serve --demo` prints the URL, the Socket.IO URL and the
    database path, and for each demo user a ready Authorization line and a curl example whose token
    works; `touchsync token USERNAME` works against the same database."""
    tmp = tempfile.mkdtemp()
    db = os.path.join(tmp, "demo.sqlite")
    proc, base, lines = start_collecting(["--demo", "--database", db],
                                         until=lambda ls: sum("curl " in l for l in ls) >= 3)
    try:
        text = "".join(lines)
        listening = next(l for l in lines if "listening on" in l)
        assert base + "/socket.io/" in listening and db in listening, listening
        assert base + "/inspector" in text, "the inspector URL is printed"
        bearer = re.findall(r"Authorization: Bearer ([A-Za-z0-9_.-]+)", text)
        curls = [l for l in lines if "curl " in l]
        assert len(bearer) >= 3 and len(curls) >= 3, text
        seen = set()
        for token in bearer:
            me = requests.get(base + "/api/auth/me", headers={"Authorization": "Bearer " + token})
            assert me.status_code == 200, me.text
            seen.add(me.json()["data"]["username"])
        assert len(seen) == 3, seen
        for l in curls:
            assert base in l and "Authorization: Bearer " in l, l
        # The curl line's URL answers with the demo data for that user.
        url = re.search(r"(http://127\.0\.0\.1:\d+\S*)", curls[0]).group(1)
        token = re.search(r"Bearer ([A-Za-z0-9_.-]+)", curls[0]).group(1)
        rooms = requests.get(url, headers={"Authorization": "Bearer " + token})
        assert rooms.status_code == 200 and len(rooms.json()["data"]) >= 1, rooms.text

        # `touchsync token` against the same (running) database.
        name = sorted(seen)[0]
        tok = run("token", name, "--expires", "2h", "--database", db)
        assert tok.returncode == 0, tok.stderr
        cli_token = tok.stdout.strip().splitlines()[-1]
        me = requests.get(base + "/api/auth/me", headers={"Authorization": "Bearer " + cli_token})
        assert me.status_code == 200 and me.json()["data"]["username"] == name
        import base64
        import json
        payload = cli_token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        assert claims["exp"] - claims["iat"] == 7200, f"--expires 2h: {claims}"
    finally:
        proc.terminate()
        assert proc.wait(timeout=15) == 0


def test_log_format_json_writes_one_json_object_per_line():
    """`--log-format json` for machines; the request line is one of them."""
    import json
    tmp = tempfile.mkdtemp()
    proc, base, lines = start_collecting(["--log-format", "json", "--database", os.path.join(tmp, "db.sqlite")],
                                         env={"TOUCHSYNC_LOG_LEVEL": "info"})
    try:
        r = requests.get(base + "/health")
        assert r.status_code == 200
        req_id = r.headers["X-Request-Id"]
        deadline = time.time() + 5
        while time.time() < deadline and not any(req_id in l for l in lines):
            time.sleep(0.05)
        access = [l for l in lines if req_id in l]
        assert len(access) == 1, lines
        record = json.loads(access[0])
        assert {"ts", "level", "msg"} <= set(record), record
        assert "GET /health 200" in record["msg"], record
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    logs = [l for l in lines if l.startswith("{")]
    assert len(logs) >= 2, "the start-up and request lines are JSON"
    for l in logs:
        json.loads(l)


def test_sigint_and_sigterm_exit_0_after_closing_the_database():
    """SIGTERM/SIGINT stop accepting, finish in-flight requests, close the database,
    exit 0. A cleanly closed SQLite database in WAL mode has checkpointed and removed its -wal file."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        tmp = tempfile.mkdtemp()
        db = os.path.join(tmp, "db.sqlite")
        proc, base, lines = start_collecting(["--database", db], env={"TOUCHSYNC_LOG_LEVEL": "info"})
        try:
            reg = requests.post(base + "/api/auth/register", json={"username": "closer", "password": "password-123"})
            assert reg.status_code == 201
            assert os.path.exists(db + "-wal"), "the database runs in WAL mode"
        finally:
            proc.send_signal(sig)
            code = proc.wait(timeout=20)
        assert code == 0, "".join(lines)
        assert any("shutdown complete" in l for l in lines), "".join(lines)
        assert not os.path.exists(db + "-wal") or os.path.getsize(db + "-wal") == 0, "the database was closed (WAL checkpointed)"
        r = run("token", "closer", "--database", db)
        assert r.returncode == 0, "the data is there after a clean stop: " + r.stderr


def test_docker_files_build_every_target_and_run_the_server_as_documented():
    """The Docker files (no Docker engine here, so checked statically): the build
    stage copies every directory Package.swift names (SwiftPM refuses a package with a missing
    target path, even to build one product), and docker-compose.yml runs the server with its
    database on a named volume, a health check on /health and its config via environment."""
    with open(os.path.join(ROOT, "Package.swift")) as f:
        package = f.read()
    with open(os.path.join(ROOT, "Dockerfile")) as f:
        dockerfile = f.read()
    build_stage = dockerfile.split("\nFROM ", 2)[0] if dockerfile.startswith("FROM") else dockerfile.split("\nFROM ")[1]
    copied = {src.rstrip("/") for line in build_stage.splitlines() if line.startswith("COPY ")
              for src in line.split()[1:-1] if not src.startswith("--")}
    # Default target locations, and every custom `path:`.
    # Package.resolved is git-ignored (offline mirror pins): a clean clone has none to copy.
    # Migrations: the EmbedMigrations build-tool plugin compiles it into the binary.
    needed = {"Package.swift", "Sources", "Tests", "Migrations"}
    needed |= {p.split("/")[0] for p in re.findall(r'path:\s*"([^"]+)"', package)}
    assert needed <= copied, f"the Dockerfile's build stage does not COPY {sorted(needed - copied)}"
    assert re.search(r"HEALTHCHECK .*?/health", dockerfile)

    with open(os.path.join(ROOT, "docker-compose.yml")) as f:
        compose = f.read()
    volume = re.search(r"^\s+-\s+([A-Za-z0-9_-]+):/data\s*$", compose, re.M)
    assert volume, "the database directory is a volume"
    assert re.search(rf"^volumes:\s*\n\s+{re.escape(volume.group(1))}:", compose, re.M), "…a named one"
    assert re.search(r"TOUCHSYNC_DATABASE:\s*/data/", compose), "the database lives on the volume"
    assert re.search(r"healthcheck:\s*\n\s+test:.*?/health", compose), "a health check on /health"
    assert re.search(r"environment:\s*\n(\s+(TOUCHSYNC_[A-Z_]+:.*|#.*)\n)+", compose), "config via TOUCHSYNC_* environment"
    # Demo data and the inspector are for this machine: published on loopback only, never on
    # every interface by default (a "3000:3000" mapping would bind 0.0.0.0).
    published = re.findall(r"^\s+-\s+\"?([0-9.:\[\]]+)\"?\s*$", compose.split("ports:", 1)[1].split("environment:", 1)[0], re.M)
    assert published == ["127.0.0.1:3000:3000"], f"port mappings {published}: publish on 127.0.0.1 only"
    with open(os.path.join(ROOT, "README.md")) as f:
        assert "docker compose up" in f.read(), "the README shows the one command"


def test_config_precedence_through_the_binary():
    """Defaults < --config file < TOUCHSYNC_* environment < command-line flags,
    through the real `touchsync serve` (ConfigurationTests covers the loader itself)."""
    import json
    tmp = tempfile.mkdtemp()
    config = os.path.join(tmp, "touchsync.json")
    with open(config, "w") as f:
        json.dump({"server": {"maxBodyBytes": 100}, "database": {"path": os.path.join(tmp, "from-file.sqlite")}}, f)
    flag_db = os.path.join(tmp, "from-flag.sqlite")
    proc, base, lines = start_collecting(["--config", config, "--database", flag_db, "--log-level", "warning"],
                                         env={"TOUCHSYNC_SERVER_MAX_BODY_BYTES": "200", "TOUCHSYNC_LOG_LEVEL": "info"})
    try:
        listening = next(l for l in lines if "listening on" in l)
        assert flag_db in listening, "the flag beats the file: " + listening
        assert os.path.exists(flag_db) and not os.path.exists(os.path.join(tmp, "from-file.sqlite"))

        def login(size):
            # Padded inside the password: an unknown field would be refused (400) before the login.
            body = json.dumps({"username": "nobody", "password": ""})
            body = body[:-2] + "x" * (size - len(body)) + '"}'
            assert len(body) == size
            return requests.post(base + "/api/auth/login", data=body, headers={"Content-Type": "application/json"}).status_code
        assert login(150) == 401, "the environment (200) beats the file (100)"
        assert login(250) == 413, "…and is the limit"
        h = requests.get(base + "/health")
        time.sleep(0.3)
        assert not any(h.headers["X-Request-Id"] in l for l in lines), "--log-level warning beats TOUCHSYNC_LOG_LEVEL=info"
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def test_missing_secret_is_generated_stored_beside_the_database_and_warned_about():
    """Without auth.jwtSecret the server generates one, stores it beside the
    database and warns (ConfigurationTests checks the file and its reuse)."""
    tmp = tempfile.mkdtemp()
    db = os.path.join(tmp, "db.sqlite")
    proc, base, lines = start_collecting(["--database", db], env={"TOUCHSYNC_JWT_SECRET": None, "TOUCHSYNC_ENV": None})
    try:
        assert requests.get(base + "/health").status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    secret_files = [f for f in os.listdir(tmp) if "secret" in f]
    assert secret_files, os.listdir(tmp)
    warnings = [l for l in lines if "secret" in l.lower() and ("warn" in l.lower() or "generated" in l.lower())]
    assert warnings and any(secret_files[0] in l or tmp in l for l in warnings), "".join(lines)


# ---- one self-contained binary; start-up errors a newcomer can act on --------------------------

def _serve_elsewhere(binary, cwd, args, env=None, timeout=60):
    """Starts `binary serve --port 0 …args` in `cwd` (not the project root), without any
    TOUCHSYNC_MIGRATIONS_DIR, and returns (proc, base, lines) once it listens."""
    import threading
    e = dict(os.environ)
    e.update(BASE_ENV)
    e.update(env or {})
    for k in ("TOUCHSYNC_MIGRATIONS_DIR", "TOUCHSYNC_DATABASE_MIGRATIONS_DIR"):
        e.pop(k, None)
    proc = subprocess.Popen([binary, "serve", "--port", "0", *args], cwd=cwd, env=e,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    threading.Thread(target=lambda: [lines.append(l) for l in proc.stdout], daemon=True).start()
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        for l in list(lines):
            m = re.search(r"TouchSync .* listening on (http://127\.0\.0\.1:\d+)", l)
            if m and sum("curl " in x for x in lines) >= 4:
                return proc, m.group(1), lines
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"{binary} did not start in {cwd}:\n" + "".join(lines))


def test_serve_demo_runs_from_any_directory_and_as_a_lone_copied_binary():
    """The migrations are embedded, so `touchsync serve --demo` works from a
    directory with no Migrations/ in it, and the binary works after being copied alone elsewhere."""
    tmp = tempfile.mkdtemp()
    lone_dir = os.path.join(tmp, "lone")
    os.makedirs(lone_dir)
    lone = os.path.join(lone_dir, "touchsync")
    shutil.copy2(BIN, lone)
    for binary, cwd in [(BIN, tmp), (lone, lone_dir)]:
        assert not os.path.exists(os.path.join(cwd, "Migrations"))
        proc, base, lines = _serve_elsewhere(binary, cwd, ["--demo"])
        try:
            assert requests.get(base + "/health").status_code == 200
            token = re.findall(r"Authorization: Bearer ([A-Za-z0-9_.-]+)", "".join(lines))[0]
            rooms = requests.get(base + "/api/rooms/my-rooms", headers={"Authorization": "Bearer " + token})
            assert rooms.status_code == 200 and len(rooms.json()["data"]) >= 1, rooms.text
        finally:
            proc.terminate()
            assert proc.wait(timeout=15) == 0
        # The default database is relative to where it was started.
        assert os.path.exists(os.path.join(cwd, "data", "touchsync.sqlite"))


def test_migrations_dir_override_still_applies_and_a_missing_one_is_named():
    """TOUCHSYNC_MIGRATIONS_DIR stays an override: a directory with one extra migration is applied;
    a directory that does not exist stops the start, naming it."""
    tmp = tempfile.mkdtemp()
    migrations = os.path.join(tmp, "Migrations")
    shutil.copytree(os.path.join(ROOT, "Migrations"), migrations)
    last = max(int(f.split("_")[0]) for f in os.listdir(migrations) if f.endswith(".sql"))
    extra = f"{last + 1:04d}_override_probe.sql"
    with open(os.path.join(migrations, extra), "w") as f:
        f.write("CREATE TABLE override_probe (id INTEGER PRIMARY KEY);\n")
    db = os.path.join(tmp, "db.sqlite")
    r = run("migrate", "--database", db, env={"TOUCHSYNC_MIGRATIONS_DIR": migrations, "TOUCHSYNC_LOG_LEVEL": "info"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert extra in (r.stdout + r.stderr), "the override's extra migration was applied"
    missing = os.path.join(tmp, "nowhere")
    r = run("serve", "--port", "0", "--database", os.path.join(tmp, "db2.sqlite"),
            env={"TOUCHSYNC_MIGRATIONS_DIR": missing}, timeout=30)
    assert r.returncode != 0 and missing in (r.stdout + r.stderr), r.stdout + r.stderr


def test_busy_port_is_named_before_the_database_is_touched():
    """A busy port stops the start before migrating or seeding, names the port and
    suggests --port 0 or the setting."""
    import socket
    tmp = tempfile.mkdtemp()
    db = os.path.join(tmp, "db.sqlite")
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        r = run("serve", "--demo", "--port", str(port), "--database", db, timeout=30)
    finally:
        holder.close()
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert f"port {port}" in out and "already in use" in out, out
    assert "--port 0" in out and "server.port" in out, out
    assert not os.path.exists(db), "the database was not created: the port is checked first"
    assert "applied migration" not in out and "Demo users" not in out, out


def test_demo_tour_prints_a_python_command_that_works_in_a_venv():
    """Debian 12 refuses a system-wide pip install (PEP 668), so the tour creates a
    virtualenv; its python-socketio line, run with a Python that has the pinned client (this test's
    own .venv), receives the reaction the curl line causes."""
    import sys
    tmp = tempfile.mkdtemp()
    proc, base, lines = _serve_elsewhere(BIN, tmp, ["--demo", "--database", os.path.join(tmp, "tour.sqlite")])
    watcher = None
    try:
        text = "".join(lines)
        assert "pip install \"python-socketio" not in text.split("venv")[0], "no bare system-wide pip install"
        venv_line = next(l for l in lines if "python3 -m venv" in l)
        m = re.search(r"python3 -m venv (\S+) && \1/bin/pip install -q \"python-socketio\[client\]==([\d.]+)\"", venv_line)
        assert m, venv_line
        venv = m.group(1)
        watch = next(l for l in lines if f"{venv}/bin/python -c" in l).strip()
        curl = next(l for l in lines if l.strip().startswith("curl -X POST")).strip()
        cmd = watch.replace(f"{venv}/bin/python", sys.executable, 1)
        watcher = subprocess.Popen(["bash", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # Wait for the join ack before hearting (the watcher prints it).
        import threading
        out = []
        threading.Thread(target=lambda: [out.append(l) for l in watcher.stdout], daemon=True).start()
        deadline = time.time() + 30
        while time.time() < deadline and not out and watcher.poll() is None:
            time.sleep(0.1)
        assert out, "the watcher printed its room:join ack"
        url = re.search(r"(http://\S+/reactions/toggle)", curl).group(1)
        token = re.search(r"Bearer ([A-Za-z0-9_.-]+)", curl).group(1)
        r = requests.post(url, headers={"Authorization": "Bearer " + token})
        assert r.status_code in (200, 201), r.text
        deadline = time.time() + 15
        while time.time() < deadline and not any("element:reaction:added" in l for l in out):
            time.sleep(0.1)
        assert any("element:reaction:added" in l for l in out), "".join(out)
    finally:
        if watcher:
            watcher.kill()
            watcher.wait(timeout=10)
        proc.terminate()
        proc.wait(timeout=15)


def _version(text):
    return tuple(int(x) for x in text.split("."))


def _tools_version(manifest):
    with open(manifest) as f:
        first = f.readline()
    m = re.match(r"//\s*swift-tools-version\s*:\s*(\d+\.\d+(?:\.\d+)?)", first)
    assert m, f"{manifest}: no swift-tools-version on its first line: {first!r}"
    return _version(m.group(1))


def _manifest_for(package_dir, toolchain):
    """The manifest a toolchain of version `toolchain` reads (SwiftPM's rule): the
    Package@swift-X[.Y[.Z]].swift with the highest version not above the toolchain's, else Package.swift."""
    best = None
    for name in os.listdir(package_dir):
        m = re.fullmatch(r"Package@swift-(\d+(?:\.\d+){0,2})\.swift", name)
        if m and _version(m.group(1)) <= toolchain and (best is None or _version(m.group(1)) > best[0]):
            best = (_version(m.group(1)), name)
    return os.path.join(package_dir, best[1] if best else "Package.swift")


def test_dockerfile_swift_is_new_enough_for_every_manifest():
    """The build image's Swift must be at least the swift-tools-version of the
    package and of every resolved dependency (as checked out by the last `swift build`)."""
    import glob
    with open(os.path.join(ROOT, "Dockerfile")) as f:
        dockerfile = f.read()
    images = re.findall(r"^FROM\s+(?:--platform=\S+\s+)?swift:(\d+\.\d+(?:\.\d+)?)\S*", dockerfile, re.M)
    assert images, "the Dockerfile builds FROM an official swift:X.Y image"
    image = min(_version(v) for v in images)
    packages = [ROOT] + sorted({os.path.dirname(p) for p in glob.glob(os.path.join(ROOT, ".build*", "checkouts", "*", "Package.swift"))})
    if len(packages) == 1:
        import pytest
        pytest.skip("no dependency checkouts under .build*/checkouts: run `swift build` first")
    too_new = []
    for package in packages:
        manifest = _manifest_for(package, image)
        needed = _tools_version(manifest)
        if needed > image:
            too_new.append(f"{os.path.relpath(manifest, ROOT)} needs Swift {'.'.join(map(str, needed))}")
    assert not too_new, f"FROM swift:{'.'.join(map(str, image))} is too old: " + "; ".join(too_new)


def test_dockerfile_runtime_is_slim_non_root_with_a_volume():
    """Multi-stage, slim runtime with only the runtime libraries, a non-root user,
    a volume for the database, a health check; the migrations are in the binary (no copy)."""
    with open(os.path.join(ROOT, "Dockerfile")) as f:
        dockerfile = f.read()
    stages = re.findall(r"^FROM\s+(\S+)", dockerfile, re.M)
    assert len(stages) == 2 and stages[1] == "debian:bookworm-slim", stages
    runtime = dockerfile.split("\nFROM ")[2]
    for pkg in ("libsqlite3-0", "libssl3", "ca-certificates"):
        assert pkg in runtime, pkg
    installs = " ".join(l for l in runtime.splitlines() if "apt-get install" in l)
    # Runtime libraries only: no -dev package, no curl command (libcurl4 is the APNs provider's library).
    assert "-dev" not in installs and not re.search(r"(?<!lib)curl\b", installs), "runtime libraries only"
    user = re.search(r"^USER\s+(\S+)", runtime, re.M)
    assert user and user.group(1) not in ("root", "0"), "a non-root user"
    assert re.search(r'^VOLUME\s+\[?"?/data', runtime, re.M), "the database directory is a volume"
    assert "TOUCHSYNC_DATABASE=/data/" in runtime
    assert "Migrations" not in runtime and "TOUCHSYNC_MIGRATIONS_DIR" not in runtime, "migrations are embedded"
    assert re.search(r"^HEALTHCHECK .*?/health", runtime, re.M)
# ---- end of the self-contained binary ----------------------------------------------------------
# --- touchsync exec (docs/exec.md) -----------------------------------------------------------
# The command is a small python script (this interpreter, so `requests` is importable) that checks
# what it was given and writes a report; the test then checks the exit status and that the server
# is gone afterwards.

EXEC_CHECK = r'''
import json, os, sys, requests
out = {"env": {k: v for k, v in os.environ.items() if k.startswith(("TOUCHSYNC_", "TEST_RUNNER_TOUCHSYNC_"))}}
base = os.environ["TOUCHSYNC_URL"]
out["health"] = requests.get(base + "/health").status_code
if "TOUCHSYNC_TOKEN_ALICE" in os.environ:
    h = {"Authorization": "Bearer " + os.environ["TOUCHSYNC_TOKEN_ALICE"]}
    out["me"] = requests.get(base + "/api/auth/me", headers=h).json()["data"]["username"]
if "TOUCHSYNC_FIXTURES_FILE" in os.environ:
    out["file"] = json.load(open(os.environ["TOUCHSYNC_FIXTURES_FILE"]))
if "TOUCHSYNC_ROOM_DESIGN" in os.environ:
    room, el = os.environ["TOUCHSYNC_ROOM_DESIGN"], os.environ["TOUCHSYNC_ELEMENT_KICKOFF"]
    since = requests.get(base + "/api/test/events?limit=1").json()["data"]["lastSequence"]
    t = requests.post(f"{base}/api/rooms/{room}/elements/{el}/reactions/toggle", headers=h)
    out["toggle"] = t.status_code
    ev = requests.get(f"{base}/api/test/events?since={since}&event=element:reaction:added").json()["data"]["events"]
    out["events"] = len(ev)
json.dump(out, open(sys.argv[1], "w"))
sys.exit(int(sys.argv[2]))
'''


def exec_run(*args, env=None, timeout=90):
    e = dict(os.environ)
    e.update(BASE_ENV)
    e.pop("TOUCHSYNC_JWT_SECRET", None)  # exec needs none
    e.update(env or {})
    return subprocess.run([BIN, "exec", *args], cwd=ROOT, env=e, capture_output=True, text=True, timeout=timeout)


def exec_check(*exec_args, status=0):
    import json
    import sys
    tmp = tempfile.mkdtemp()
    report = os.path.join(tmp, "report.json")
    script = os.path.join(tmp, "check.py")
    with open(script, "w") as f:
        f.write(EXEC_CHECK)
    r = exec_run(*exec_args, "--", sys.executable, script, report, str(status))
    with open(report) as f:
        return r, json.load(f)


def assert_gone(url):
    try:
        requests.get(url + "/health", timeout=2)
    except requests.ConnectionError:
        return
    raise AssertionError(f"{url} still answers after exec returned")


def test_exec_runs_the_command_against_a_fresh_test_mode_server_with_fixture_variables():
    r, out = exec_check("--fixtures", os.path.join(ROOT, "config", "fixtures", "example.json"))
    assert r.returncode == 0, r.stderr
    env = out["env"]
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", env["TOUCHSYNC_URL"]) and out["health"] == 200
    assert out["me"] == "alice", "TOUCHSYNC_TOKEN_ALICE is alice's token"
    for name in ("TOKEN_BOB", "TOKEN_CAROL", "USER_ID_ALICE", "ROOM_WEEKEND", "ELEMENT_PHOTO", "MESSAGE_WELCOME", "POST_LAUNCH"):
        assert env.get("TOUCHSYNC_" + name), name
        assert env.get("TEST_RUNNER_TOUCHSYNC_" + name) == env["TOUCHSYNC_" + name], "the xcodebuild copy"
    # The JSON file holds the same, as the fixtures answer shows it.
    assert out["file"]["url"] == env["TOUCHSYNC_URL"]
    assert out["file"]["users"]["alice"]["token"] == env["TOUCHSYNC_TOKEN_ALICE"]
    assert out["file"]["rooms"]["design"] == env["TOUCHSYNC_ROOM_DESIGN"]
    # Test mode is on: the worked example of docs/test-mode.md, without a socket.
    assert out["toggle"] == 200 and out["events"] == 1
    assert_gone(env["TOUCHSYNC_URL"])
    assert not os.path.exists(env["TOUCHSYNC_FIXTURES_FILE"]), "the fixtures file is removed afterwards"


def test_exec_exits_with_the_commands_status_and_stops_the_server():
    for status in (0, 1, 3):
        r, out = exec_check(status=status)
        assert r.returncode == status, (status, r.stderr)
        assert out["health"] == 200 and "TOUCHSYNC_TOKEN_ALICE" not in out["env"]
        assert_gone(out["env"]["TOUCHSYNC_URL"])
    # Killed by a signal: 128 + N, as a shell reports it.
    r = exec_run("--", "sh", "-c", "kill -KILL $$")
    assert r.returncode == 128 + signal.SIGKILL, r.stderr
    # Not found: 127; fixtures that do not load: 125 and the command never runs.
    r = exec_run("--", "no-such-command-here")
    assert r.returncode == 127 and "command not found" in r.stderr
    tmp = tempfile.mkdtemp()
    marker = os.path.join(tmp, "ran")
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        f.write('{"rooms": [{"ref": "r", "createdBy": "nobody"}]}')
    r = exec_run("--fixtures", bad, "--", "touch", marker)
    assert r.returncode == 125 and "rooms[0].createdBy" in r.stderr, r.stderr
    assert not os.path.exists(marker)
    r = exec_run()
    assert r.returncode != 0 and "missing the command" in r.stderr


def test_exec_demo_exports_the_demo_users_tokens():
    r, out = exec_check("--demo")
    assert r.returncode == 0, r.stderr
    assert out["me"] == "alice"
    assert set(out["file"]["users"]) >= {"alice", "bob", "carol"}
    assert_gone(out["env"]["TOUCHSYNC_URL"])


def test_exec_forwards_sigterm_to_the_command():
    import sys
    tmp = tempfile.mkdtemp()
    ready = os.path.join(tmp, "ready")
    script = ("import os, signal, sys, time\n"
              "signal.signal(signal.SIGTERM, lambda *a: sys.exit(42))\n"
              f"open({ready!r}, 'w').write(os.environ['TOUCHSYNC_URL'])\n"
              "time.sleep(60)\n")
    e = dict(os.environ)
    e.update(BASE_ENV)
    proc = subprocess.Popen([BIN, "exec", "--", sys.executable, "-c", script], cwd=ROOT, env=e,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 60
        while not os.path.exists(ready) or not open(ready).read():
            assert proc.poll() is None, proc.communicate()
            assert time.time() < deadline, "the command did not start"
            time.sleep(0.05)
        url = open(ready).read()
        assert requests.get(url + "/health").status_code == 200
        started = time.time()
        proc.send_signal(signal.SIGTERM)
        try:
            status = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate(timeout=10)
            raise AssertionError(f"touchsync exec still running 30 s after SIGTERM; its output:\n{out[-2000:]}\n{err[-4000:]}")
        assert status == 42, "the command's own status after it handled SIGTERM"
        assert time.time() - started < 10
        assert_gone(url)
    finally:
        if proc.poll() is None:
            proc.kill()


# --- touchsync export / import ----------------------------------------------------------------

def normalize_export(doc):
    """Replaces every id-valued ref by its position, so two exports of the same data compare equal."""
    import json
    names = {}
    for kind in ("rooms", "elements", "messages", "posts"):
        for i, o in enumerate(doc.get(kind, [])):
            names[o["ref"]] = f"{kind}#{i}"
    text = json.dumps(doc, sort_keys=True)
    for ref, name in names.items():
        text = text.replace(ref, name)
    return json.loads(text)


def test_export_import_round_trip_keeps_every_row_and_the_logins():
    import json
    tmp = tempfile.mkdtemp()
    a, b = os.path.join(tmp, "a.sqlite"), os.path.join(tmp, "b.sqlite")
    proc, base, _ = start_collecting(["--test-mode", "--database", a])
    try:
        fx = requests.post(base + "/api/test/fixtures", data=open(os.path.join(ROOT, "config", "fixtures", "example.json"), "rb"),
                           headers={"Content-Type": "application/json", "X-TouchSync-Test": "1"}).json()["data"]
        alice = {"Authorization": "Bearer " + fx["users"]["alice"]["token"]}
        assert requests.post(base + "/api/devices", json={"token": "apns-device-1", "platform": "ios"}, headers=alice).status_code == 201
        assert requests.patch(base + f"/api/rooms/{fx['rooms']['weekend']}", json={"name": "Weekend plans"}, headers=alice).status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=15)

    first = os.path.join(tmp, "first.json")
    r = run("export", first, "--database", a)
    assert r.returncode == 0, r.stderr
    doc = json.load(open(first))
    assert [len(doc[k]) for k in ("users", "rooms", "elements", "reactions", "messages", "posts", "likes", "saves", "devices")] == \
        [3, 2, 3, 3, 2, 2, 3, 1, 1], doc
    assert all("password" not in u and u["passwordHash"] for u in doc["users"])
    assert {"ref": doc["rooms"][1]["ref"], "name": "Weekend plans"}.items() <= doc["rooms"][1].items()

    r = run("import", first, "--database", b)
    assert r.returncode == 0, r.stderr
    second = os.path.join(tmp, "second.json")
    assert run("export", "-", "--database", b).returncode == 0
    r = run("export", second, "--database", b)
    assert r.returncode == 0, r.stderr
    assert normalize_export(json.load(open(second))) == normalize_export(doc), "export(import(export)) == export"

    # Importing again refuses a database with users; --replace empties it first.
    r = run("import", first, "--database", b)
    assert r.returncode != 0 and "already has 3 users" in r.stderr
    r = run("import", first, "--replace", "--database", b)
    assert r.returncode == 0, r.stderr

    # The imported users log in with their old passwords; the data is there.
    proc, base, _ = start_collecting(["--database", b])
    try:
        login = requests.post(base + "/api/auth/login", json={"username": "bob", "password": "bob-password"})
        assert login.status_code == 200, login.text
        rooms = requests.get(base + "/api/rooms/my-rooms", headers={"Authorization": "Bearer " + login.json()["data"]["token"]}).json()["data"]
        assert sorted(r["name"] for r in rooms) == ["Design Team", "Weekend plans"]
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def test_exec_forwards_sigint_and_reports_128_plus_the_signal():
    """SIGINT reaches the command with its default action (python: KeyboardInterrupt, then it ends
    by SIGINT); exec reports 128 + 2 as a shell would."""
    import sys
    tmp = tempfile.mkdtemp()
    ready = os.path.join(tmp, "ready")
    script = f"import os, time\nopen({ready!r}, 'w').write(os.environ['TOUCHSYNC_URL'])\ntime.sleep(60)\n"
    e = dict(os.environ)
    e.update(BASE_ENV)
    proc = subprocess.Popen([BIN, "exec", "--", sys.executable, "-c", script], cwd=ROOT, env=e,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 60
        while not os.path.exists(ready) or not open(ready).read():
            assert proc.poll() is None, proc.communicate()
            assert time.time() < deadline, "the command did not start"
            time.sleep(0.05)
        url = open(ready).read()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 128 + signal.SIGINT
        assert_gone(url)
    finally:
        if proc.poll() is None:
            proc.kill()




def test_repository_needs_nothing_outside_itself():
    """No tracked file of the product, its tests, scripts or docs points at a path
    outside the repository (the old links and tools in the shared folder beside the clone)."""
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode != 0:
        import pytest
        pytest.skip("not a git checkout: " + tracked.stderr.strip())
    offenders = []
    for rel in tracked.stdout.splitlines():
        if rel == "conformance/test_cli.py" or not os.path.isfile(os.path.join(ROOT, rel)):
            continue
        try:
            with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
                text = f.read()
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if re.search(r"\.\./shared\b|/work/shared\b", line):
                offenders.append(f"{rel}:{n}: {line.strip()}")
    assert not offenders, "paths outside the repository:\n" + "\n".join(offenders)


def test_poller_is_selectable_and_an_unavailable_one_is_refused_clearly():
    """server.poller / TOUCHSYNC_SERVER_POLLER and conformance-server --poller.
    On Linux kqueue is not available: both refuse it, naming what is."""
    import platform
    import socket
    conformance = os.environ.get("CONFORMANCE_BIN") or os.path.join(ROOT, ".build", "debug", "conformance-server")
    unavailable = "kqueue" if platform.system() == "Linux" else "epoll"
    r = run("serve", "--port", "0", "--database", os.path.join(tempfile.mkdtemp(), "db.sqlite"),
            env={"TOUCHSYNC_SERVER_POLLER": unavailable}, timeout=30)
    assert r.returncode != 0 and "server.poller" in (r.stdout + r.stderr) and "poll" in (r.stdout + r.stderr), r.stdout + r.stderr
    bad = subprocess.run([conformance, "--port", "0", "--poller", unavailable], capture_output=True, text=True, timeout=30)
    assert bad.returncode != 0 and "--poller" in (bad.stdout + bad.stderr), bad.stdout + bad.stderr
    # An explicit choice is used (and printed).
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen([conformance, "--port", str(port), "--poller", "poll"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline()
        assert "(poller poll)" in line, line
        assert requests.get(f"http://127.0.0.1:{port}/socket.io/?EIO=4&transport=polling").status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=15)
