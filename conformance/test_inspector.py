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
        self.call("Runtime.enable")
        self.call("Page.enable")

    def call(self, method, **params):
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
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
