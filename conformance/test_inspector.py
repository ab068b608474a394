"""The live inspector (/inspector) in a real browser: headless Chromium driven over the DevTools
protocol (websocket-client), against the session's `touchsync serve`.

The page is opened first; then a python-socketio client connects and a REST reaction toggle
happens, and the test waits for both to show up in the page's DOM (the sockets table and the
event tail), filters the tail by room and event name, and saves a screenshot.

Skipped, with a visible "chromium not found" reason (`pytest -rs`), when no Chromium is installed
(`apt-get install -y chromium`); CHROMIUM_BIN picks a specific binary.
"""
import base64
import json
import os
import shutil
import struct
import subprocess
import tempfile
import time

import pytest
import requests
import socketio
import websocket


def find_chromium():
    if os.environ.get("CHROMIUM_BIN"):
        return os.environ["CHROMIUM_BIN"]
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


CHROMIUM = find_chromium()
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="skipped: chromium not found (apt-get install -y chromium)")


class Browser:
    """One headless Chromium with one page, driven over the DevTools protocol."""

    def __init__(self, width=1400, height=1400):
        self.profile = tempfile.mkdtemp(prefix="touchsync-chromium-")
        args = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--no-default-browser-check", "--hide-scrollbars", f"--window-size={width},{height}",
                "--remote-debugging-port=0", f"--user-data-dir={self.profile}", "about:blank"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + 30
        while not (os.path.exists(port_file) and open(port_file).read().count("\n") >= 1):
            assert self.proc.poll() is None, "chromium exited at start"
            assert time.time() < deadline, "chromium did not open its DevTools port"
            time.sleep(0.1)
        port = int(open(port_file).read().split("\n")[0])
        pages = [t for t in requests.get(f"http://127.0.0.1:{port}/json/list", timeout=5).json() if t["type"] == "page"]
        assert pages, "no page target"
        # No Origin header: Chromium refuses DevTools websockets from origins it was not told about.
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        self.next_id = 0
        self.exceptions = []
        self.events = []  # every DevTools event read while waiting for an answer (e.g. Fetch.requestPaused)
        self.call("Runtime.enable")
        self.call("Page.enable")

    def call(self, method, **params):
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if "method" in msg:
                self.events.append(msg)
            if msg.get("method") == "Runtime.exceptionThrown":
                self.exceptions.append(msg["params"]["exceptionDetails"])
            if msg.get("id") == my_id:
                assert "error" not in msg, f"{method}: {msg['error']}"
                return msg.get("result", {})

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in r, f"{expression}: {r['exceptionDetails']}"
        return r["result"].get("value")

    def wait_for(self, expression, timeout=15, what=None):
        deadline = time.time() + timeout
        while time.time() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what or expression}; page text:\n" + (self.evaluate("document.body.innerText") or "")[:3000])

    def close(self):
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture
def browser():
    b = Browser()
    yield b
    b.close()


def png_size(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@needs_chromium
def test_inspector_shows_live_sockets_and_events_in_a_real_browser(server, browser):
    browser.call("Page.navigate", url=server.url("/inspector"))
    browser.wait_for("document.body && document.body.dataset.ready === '1'", what="the first successful poll")
    assert browser.evaluate("document.title") == "TouchSync Inspector"

    # State created after the page is open, so it can only arrive by the page's polling.
    a, b = server.register("insp_a"), server.register("insp_b")
    room = server.room(a, members=[b])
    element = server.element(a, room)
    client = socketio.Client(reconnection=False)
    client.connect(server.base, auth={"token": b["token"]}, transports=["websocket"])
    try:
        assert client.call("room:join", {"roomId": room}, timeout=5) is not None
        sid = client.get_sid()

        # The sockets table lists the socket with its user, transport and room.
        row = f"document.querySelector('#sockets-body tr[data-socket=\"{sid}\"]')"
        text = browser.wait_for(f"{row} && {row}.innerText", what="the socket row")
        assert b["username"] in text and "websocket" in text

        # The rooms table shows the room with both members and its element count.
        room_row = f"document.querySelector('#rooms-body tr[data-room=\"{room}\"]')"
        text = browser.wait_for(f"{room_row} && {room_row}.innerText", what="the room row")
        assert a["username"] in text and b["username"] in text

        # A REST toggle: element:reaction:added shows up in the event tail with its payload.
        r = requests.post(server.url(f"/api/rooms/{room}/elements/{element['id']}/reactions/toggle"), headers=server.auth(a))
        assert r.status_code == 200, r.text
        payload_js = ("[...document.querySelectorAll('#events-body tr.ev-row[data-event=\"element:reaction:added\"] pre.payload')]"
                      f".map(p => p.textContent).find(t => t.includes('{element['id']}'))")
        payload = json.loads(browser.wait_for(payload_js, what="the element:reaction:added row"))
        assert payload["elementId"] == element["id"] and payload["roomId"] == room
        assert payload["reaction"]["userId"] == a["id"]

        # Filtering by room and event name leaves only that event of that room.
        browser.evaluate(f"""(() => {{
            for (const [id, v] of [['f-room', '{room}'], ['f-event', 'element:reaction:added']]) {{
                const input = document.getElementById(id); input.value = v; input.dispatchEvent(new Event('input'));
            }} }})()""")
        names = browser.wait_for("""(() => {
            const rows = [...document.querySelectorAll('#events-body tr.ev-row')];
            const names = rows.map(r => r.dataset.event);
            return rows.length > 0 && names.every(n => n === 'element:reaction:added')
                && rows.every(r => r.querySelector('pre.payload').textContent.includes('""" + room + """')) && names;
        })()""", what="the filtered tail")
        assert names and set(names) == {"element:reaction:added"}

        # Nothing was loaded from anywhere but the server itself, and the script threw nothing.
        foreign = browser.evaluate("performance.getEntriesByType('resource').map(e => e.name).filter(n => !n.startsWith(location.origin))")
        assert foreign == []
        assert browser.exceptions == []

        shot = base64.b64decode(browser.call("Page.captureScreenshot", format="png")["data"])
        path = os.path.join(tempfile.mkdtemp(prefix="touchsync-inspector-"), "inspector.png")
        with open(path, "wb") as f:
            f.write(shot)
        width, height = png_size(open(path, "rb").read())
        assert os.path.getsize(path) > 10_000 and width >= 800 and height >= 600, (path, width, height)
    finally:
        client.disconnect()


def test_inspector_api_answers_json_and_hides_tokens_outside_demo_mode(server):
    overview = requests.get(server.url("/inspector/api/overview")).json()
    assert overview["demo"] is False and overview["tokenRequired"] is False
    assert requests.get(server.url("/inspector/api/demo")).json() == {"demo": False, "users": []}
    # A request addressed to another host name is refused (DNS-rebinding protection).
    r = requests.get(server.url("/inspector/api/overview"), headers={"Host": "rebind.example"})
    assert r.status_code == 403


# --- the data browser and the request list ---------------------------------------------------
# A server of its own in test mode (the data browser may change data only in test or demo mode),
# with the example fixtures loaded before each test.

import re
import threading

from conftest import ROOT

SHOTS = os.environ.get("INSPECTOR_SCREENSHOTS_DIR") or tempfile.mkdtemp(prefix="touchsync-inspector-")
FIXTURES = os.path.join(ROOT, "config", "fixtures", "example.json")


@pytest.fixture(scope="module")
def test_server():
    binary = os.environ.get("TOUCHSYNC_BIN") or os.path.join(ROOT, ".build", "debug", "touchsync")
    env = dict(os.environ)
    env.update({"TOUCHSYNC_AUTH_PASSWORD_ITERATIONS": "1000", "TOUCHSYNC_JWT_SECRET": "inspector-secret-0123456789abcdef"})
    proc = subprocess.Popen([binary, "serve", "--test-mode", "--port", "0", "--database", ":memory:"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines, base = [], None
    deadline = time.time() + 60
    while time.time() < deadline and base is None:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"TouchSync .* listening on (http://127\.0\.0\.1:\d+)", line)
        base = m.group(1) if m else None
    assert base, "server did not start:\n" + "".join(lines)
    threading.Thread(target=lambda: [lines.append(l) for l in proc.stdout], daemon=True).start()
    yield base
    proc.terminate()
    proc.wait(timeout=15)


@pytest.fixture
def fixtures(test_server):
    assert requests.post(test_server + "/api/test/reset", headers={"X-TouchSync-Test": "1"}).status_code == 200
    r = requests.post(test_server + "/api/test/fixtures", data=open(FIXTURES, "rb"), headers={"X-TouchSync-Test": "1", "Content-Type": "application/json"})
    assert r.status_code == 201, r.text
    return r.json()["data"]


def shot(browser, name):
    data = base64.b64decode(browser.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"])
    path = os.path.join(SHOTS, name)
    with open(path, "wb") as f:
        f.write(data)
    width, height = png_size(data)
    assert os.path.getsize(path) > 10_000 and width >= 800 and height >= 600, (path, width, height)
    return path


def click(browser, selector, what=None):
    browser.wait_for(f"!!document.querySelector({json.dumps(selector)})", what=what or selector)
    browser.evaluate(f"document.querySelector({json.dumps(selector)}).click()")


def open_data(browser, base, kind):
    browser.call("Page.navigate", url=base + "/inspector")
    browser.wait_for("document.body && document.body.dataset.ready === '1'", what="the first poll")
    click(browser, "#tabs button[data-view=data]")
    click(browser, f"#kinds button[data-kind={kind}]", what=f"the {kind} button")
    browser.wait_for(f"document.body.dataset.kind === '{kind}' && document.querySelectorAll('#data-body tr[data-key]').length > 0",
                     what=f"{kind} rows")


def rows_text(browser, tbody):
    return browser.evaluate(f"[...document.querySelectorAll('{tbody} tr[data-key]')].map(r => r.innerText)")


@needs_chromium
def test_data_browser_edits_an_element_and_a_socket_client_gets_element_updated(test_server, fixtures, browser):
    design, kickoff = fixtures["rooms"]["design"], fixtures["elements"]["kickoff"]
    updates = []
    client = socketio.Client(reconnection=False)
    client.on("element:updated", lambda data: updates.append(data))
    client.connect(test_server, auth={"token": fixtures["users"]["bob"]["token"]}, transports=["websocket"])
    try:
        assert client.call("room:join", {"roomId": design}, timeout=5) is not None
        open_data(browser, test_server, "rooms")
        assert any("Design Team" in t for t in rows_text(browser, "#data-body"))
        click(browser, f"button.open-room[data-room='{design}']")
        browser.wait_for(f"!!document.querySelector('#room-elements-body tr[data-key=\"{kickoff}\"]')", what="the kickoff element row")
        members = rows_text(browser, "#room-members-body")
        assert {"alice", "bob", "carol"} <= {w for t in members for w in t.split()}, members
        assert any("Welcome to the Design Team board!" in t for t in rows_text(browser, "#room-messages-body"))

        click(browser, f"#room-elements-body button.edit-element[data-id='{kickoff}']")
        browser.evaluate(f"""(() => {{ const i = document.querySelector('tr.edit-row[data-id="{kickoff}"] input[name=content]');
            i.value = 'Edited in the inspector'; }})()""")
        click(browser, f"tr.edit-row[data-id='{kickoff}'] button.save-element")
        browser.wait_for("document.getElementById('data-status').textContent.includes('Saved element')", what="the saved status")
        deadline = time.time() + 10
        while time.time() < deadline and not updates:
            time.sleep(0.05)
        assert updates, "the socket client got element:updated"
        assert updates[0]["element"]["id"] == kickoff and updates[0]["element"]["content"] == "Edited in the inspector"
        # The page shows the stored value, and the API agrees.
        browser.wait_for(f"!!document.querySelector('#room-elements-body tr[data-key=\"{kickoff}\"]').innerText.includes('Edited in the inspector')")
        ev = requests.get(test_server + "/api/test/events?event=element:updated").json()["data"]["events"]
        assert ev and ev[-1]["payload"]["element"]["content"] == "Edited in the inspector"
        assert browser.exceptions == []
        shot(browser, "inspector-data-room.png")
    finally:
        client.disconnect()


@needs_chromium
def test_data_browser_pages_every_kind_and_deletes_rows(test_server, fixtures, browser):
    alice = {"Authorization": "Bearer " + fixtures["users"]["alice"]["token"]}
    design = fixtures["rooms"]["design"]
    for i in range(30):
        assert requests.post(test_server + f"/api/rooms/{design}/messages", json={"text": f"page message {i}"}, headers=alice).status_code == 201
    assert requests.post(test_server + "/api/devices", json={"token": "device-browser-1", "platform": "ios"}, headers=alice).status_code == 201

    open_data(browser, test_server, "users")
    assert [t.split()[1] for t in rows_text(browser, "#data-body")] == ["alice", "bob", "carol"]
    assert "passwordHash" not in browser.evaluate("document.getElementById('data-head').innerText")
    for kind, expect in [("reactions", 3), ("posts", 2), ("devices", 1), ("notifications", None), ("roomNotifications", None)]:
        click(browser, f"#kinds button[data-kind={kind}]")
        browser.wait_for(f"document.body.dataset.kind === '{kind}'", what=kind)
        count = len(rows_text(browser, "#data-body"))
        assert count == expect if expect is not None else count >= 1, (kind, count)
    shot(browser, "inspector-data-kinds.png")

    # Paging: 32 messages in the room, 25 a page.
    click(browser, "#kinds button[data-kind=rooms]")
    browser.wait_for("document.body.dataset.kind === 'rooms'")
    click(browser, f"button.open-room[data-room='{design}']")
    browser.wait_for("document.querySelectorAll('#room-messages-body tr[data-key]').length === 25", what="the first page of messages")
    browser.evaluate("document.querySelector('#room-messages').nextElementSibling.querySelectorAll('button')[1].click()")
    browser.wait_for("document.querySelectorAll('#room-messages-body tr[data-key]').length === 7", what="the second page (7 rows)")
    assert any("page message 29" in t for t in rows_text(browser, "#room-messages-body"))

    # Delete (two clicks): the message is gone from the page and from the API.
    key = browser.evaluate("document.querySelector('#room-messages-body tr[data-key]').dataset.key")
    sel = f"#room-messages-body button.delete-row[data-key='{key}']"
    click(browser, sel)
    assert browser.evaluate(f"document.querySelector(\"{sel}\").textContent") == "Click again to confirm"
    click(browser, sel)
    browser.wait_for(f"!document.querySelector('#room-messages-body tr[data-key=\"{key}\"]')", what="the deleted row to go")
    msgs = requests.get(test_server + f"/api/rooms/{design}/messages?limit=100", headers=alice).json()["data"]
    ids = [m["id"] for m in (msgs["messages"] if isinstance(msgs, dict) else msgs)]
    assert key not in ids and len(ids) == 31

    # Delete a device from the devices list.
    click(browser, "#kinds button[data-kind=devices]")
    browser.wait_for("!!document.querySelector(\"#data-body tr[data-key='device-browser-1']\")")
    for _ in range(2):
        click(browser, "#data-body button.delete-row[data-key='device-browser-1']")
    browser.wait_for("!document.querySelector(\"#data-body tr[data-key='device-browser-1']\")", what="the device row to go")
    assert requests.get(test_server + "/inspector/api/browse/devices").json()["total"] == 0
    assert browser.exceptions == []


@needs_chromium
def test_reset_and_load_fixtures_buttons(test_server, fixtures, browser):
    open_data(browser, test_server, "users")
    click(browser, "#data-reset")
    click(browser, "#data-reset")
    browser.wait_for("document.getElementById('data-status').textContent.startsWith('Reset:')", what="the reset status")
    assert browser.evaluate("document.getElementById('data-reset').textContent") == "Reset all data", "the button is disarmed again"
    browser.wait_for("document.querySelectorAll('#data-body tr[data-key]').length === 0", what="an empty users table")
    assert requests.get(test_server + "/inspector/api/browse/users").json()["total"] == 0

    click(browser, "#data-load-open")
    doc = open(FIXTURES).read()
    browser.evaluate(f"document.getElementById('fixtures-text').value = {json.dumps(doc)}")
    shot(browser, "inspector-data-fixtures.png")
    click(browser, "#fixtures-load")
    browser.wait_for("document.getElementById('data-status').textContent.startsWith('Loaded 3 users')", what="the loaded status")
    browser.wait_for("document.querySelectorAll('#data-body tr[data-key]').length === 3", what="three users")
    login = requests.post(test_server + "/api/auth/login", json={"username": "carol", "password": "carol-password"})
    assert login.status_code == 200

    # A bad document: the 400 names the field, nothing is written.
    click(browser, "#data-load-open")
    browser.evaluate("document.getElementById('fixtures-text').value = '{\"rooms\": [{\"ref\": \"r\", \"createdBy\": \"nobody\"}]}'")
    click(browser, "#fixtures-load")
    browser.wait_for("document.getElementById('data-status').textContent.includes('rooms[0].createdBy')", what="the field in the error")
    assert browser.exceptions == []


@needs_chromium
def test_request_list_shows_bodies_with_secrets_redacted(test_server, fixtures, browser):
    token = fixtures["users"]["alice"]["token"]
    login = requests.post(test_server + "/api/auth/login", json={"username": "alice", "password": "alice-password"})
    assert login.status_code == 200
    new_token = login.json()["data"]["token"]
    design = fixtures["rooms"]["design"]
    assert requests.post(test_server + f"/api/rooms/{design}/messages?token={token}", json={"text": "seen in the request list"},
                         headers={"Authorization": "Bearer " + token}).status_code == 201

    browser.call("Page.navigate", url=test_server + "/inspector")
    browser.wait_for("document.body && document.body.dataset.ready === '1'")
    click(browser, "#tabs button[data-view=requests]")
    row = "[...document.querySelectorAll('#rl-body tr.rq-row')].find(r => r.innerText.includes('/api/auth/login'))"
    browser.wait_for("!!" + row, what="the login request")
    browser.evaluate(f"{row}.click()")
    detail = browser.wait_for(f"(() => {{ const d = {row}.nextElementSibling; return !d.hidden && d.innerText; }})()", what="the login detail")
    assert '"username": "alice"' in detail and '"password": "[redacted]"' in detail and '"token": "[redacted]"' in detail
    # A refresh that lands after a click (the automatic one may be under way when the row is
    # clicked) draws new rows: the open detail stays open.
    browser.evaluate(f"{row}.dataset.drawnBefore = '1'")
    click(browser, "#rl-refresh")
    browser.wait_for(f"!!{row} && {row}.dataset.drawnBefore === undefined", what="the refreshed rows")
    assert browser.evaluate(f"!{row}.nextElementSibling.hidden"), "a refresh closed the open detail"
    msg = "[...document.querySelectorAll('#rl-body tr.rq-row')].find(r => r.innerText.includes('/messages'))"
    browser.evaluate(f"{msg}.click()")
    detail = browser.wait_for(f"(() => {{ const d = {msg}.nextElementSibling; return !d.hidden && d.innerText; }})()", what="the message detail")
    assert "Authorization: [redacted]" in detail and "seen in the request list" in detail and "token=[redacted]" in browser.evaluate(f"{msg}.innerText")
    page = browser.evaluate("document.body.innerText")
    for secret in ("alice-password", token, new_token):
        assert secret not in page, "a secret reached the page"
    assert browser.exceptions == []
    shot(browser, "inspector-requests.png")


def test_request_list_records_what_no_route_answers(test_server):
    # The recorder stands in front of the router, not a route: a 404 and a 405 are listed too.
    assert requests.get(test_server + "/no-such-page-for-the-list").status_code == 404
    assert requests.put(test_server + "/api/auth/me").status_code == 405
    entries = requests.get(test_server + "/inspector/api/requests-log?limit=50").json()["requests"]
    seen = {(e["method"], e["target"], e["status"]) for e in entries}
    assert ("GET", "/no-such-page-for-the-list", 404) in seen and ("PUT", "/api/auth/me", 405) in seen, seen


def test_changes_need_test_or_demo_mode_and_the_action_header(server, test_server, fixtures):
    # The session's server is neither: browsing works, changing is not there.
    assert requests.get(server.url("/inspector/api/browse")).json()["editable"] is False
    assert requests.get(server.url("/inspector/api/browse/users?limit=1")).status_code == 200
    for method, path in [("POST", "/inspector/api/reset"), ("POST", "/inspector/api/fixtures"), ("GET", "/inspector/api/export"),
                         ("DELETE", "/inspector/api/rows/users/x"), ("PATCH", "/inspector/api/elements/x")]:
        assert requests.request(method, server.url(path), headers={"X-Inspector-Action": "1"}).status_code in (404, 405), path
    # In test mode, without the header (what a cross-site form could send): 403, nothing changed.
    r = requests.post(test_server + "/inspector/api/reset")
    assert r.status_code == 403 and "X-Inspector-Action" in r.text
    assert requests.get(test_server + "/inspector/api/browse/users").json()["total"] == 3
    # Paging is bounded: a larger limit is cut to inspector.maxPageSize (200); past the schema's maximum, 400.
    big = requests.get(test_server + "/inspector/api/browse/users?limit=100000")
    assert big.status_code == 200 and big.json()["limit"] == 200, big.text
    assert requests.get(test_server + "/inspector/api/browse/users?limit=2000000").status_code == 400
    assert requests.get(test_server + "/inspector/api/browse/widgets").status_code == 404
    page = requests.get(test_server + "/inspector/api/browse/users?limit=2").json()
    rest = requests.get(test_server + f"/inspector/api/browse/users?limit=2&after={page['next']}").json()
    assert [u["username"] for u in page["rows"] + rest["rows"]] == ["alice", "bob", "carol"] and rest["next"] is None
    exported = requests.get(test_server + "/inspector/api/export").json()
    assert [u["username"] for u in exported["users"]] == ["alice", "bob", "carol"]


def test_request_list_is_off_in_production():
    binary = os.environ.get("TOUCHSYNC_BIN") or os.path.join(ROOT, ".build", "debug", "touchsync")
    env = dict(os.environ)
    env.update({"TOUCHSYNC_ENV": "production", "TOUCHSYNC_JWT_SECRET": "production-secret-0123456789abcdef",
                "TOUCHSYNC_INSPECTOR_ADMIN_TOKEN": "admin-token-0123456789", "TOUCHSYNC_AUTH_PASSWORD_ITERATIONS": "1000"})
    proc = subprocess.Popen([binary, "serve", "--port", "0", "--database", ":memory:"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        base = None
        deadline = time.time() + 60
        while time.time() < deadline and base is None:
            line = proc.stdout.readline()
            if not line:
                break
            m = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
            base = m.group(1) if m else None
        assert base
        admin = {"Authorization": "Bearer admin-token-0123456789"}
        assert requests.get(base + "/inspector/api/overview", headers=admin).json()["requestLog"] is False
        assert requests.get(base + "/inspector/api/requests-log", headers=admin).status_code == 404
        assert requests.get(base + "/inspector/api/browse", headers=admin).json()["editable"] is False
    finally:
        proc.terminate()
        proc.wait(timeout=15)


@needs_chromium
def test_disconnect_button_sends_a_server_disconnect_and_the_client_stays_away(test_server, fixtures, browser):
    bob = fixtures["users"]["bob"]
    reasons, connects = [], []
    client = socketio.Client(reconnection=True, reconnection_delay=0.1, reconnection_delay_max=0.2, randomization_factor=0)
    client.on("connect", lambda: connects.append(time.monotonic()))
    client.on("disconnect", lambda reason=None: reasons.append(reason))
    client.connect(test_server, auth={"token": bob["token"]}, transports=["websocket"])
    try:
        sid = client.get_sid()
        browser.call("Page.navigate", url=test_server + "/inspector")
        browser.wait_for("document.body && document.body.dataset.ready === '1'", what="the first poll")
        click(browser, f"#sockets-body button.kick-socket[data-socket='{sid}']", what="the socket's Disconnect button")
        browser.wait_for("document.getElementById('data-status').textContent.startsWith('Sent a server disconnect')", what="the status")
        deadline = time.monotonic() + 5
        while not reasons and time.monotonic() < deadline:
            time.sleep(0.02)
        assert reasons == ["server disconnect"], reasons
        # python-socketio would reconnect after 0.1 s on a transport loss; after a server disconnect it must not.
        deadline = time.monotonic() + 1.0
        while len(connects) == 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(connects) == 1, "the client reconnected after a server disconnect"
        browser.wait_for(f"!document.querySelector('#sockets-body tr[data-socket=\"{sid}\"]')", what="the socket row to go")
        assert browser.exceptions == []
    finally:
        client.disconnect()
