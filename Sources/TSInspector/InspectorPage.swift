import TSHTTP
import TSRoutes

/// The inspector's single page: static HTML, CSS and plain JavaScript, no build step, no CDN,
/// no external font. It polls `/inspector/api/*` (see `InspectorRoutes`) once a second and
/// renders every server-provided string with `textContent` (payloads are user content).
/// With an admin token it reads `?token=` once, keeps it in `sessionStorage`, removes it from the
/// address bar and sends it as `Authorization: Bearer` on each API call.
enum InspectorPage {
    /// Sent with the page: the content security policy allows only this page's inline script and
    /// style and requests to this origin, so nothing can be loaded from elsewhere.
    static let headers: HTTPHeaders = [
        "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
        "Content-Security-Policy": "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ]

    /// The page as UTF-8, encoded once.
    static let bytes = Array(html.utf8)

    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>TouchSync Inspector</title>
<style>
:root {
  --bg: #f5f6f8; --card: #fff; --ink: #1d2330; --muted: #6b7385; --line: #e3e6ec; --accent: #3b6cf6;
  --accent-soft: #e8eefe; --ok: #1f9d55; --warn: #c27c0e; --bad: #d64545; --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
header { background: #151a26; color: #fff; padding: 12px 20px; display: flex; align-items: center; gap: 18px; flex-wrap: wrap; }
header h1 { font-size: 17px; margin: 0; font-weight: 650; letter-spacing: .2px; }
header .sub { color: #9aa3b8; font-size: 12.5px; }
header .spacer { flex: 1; }
.live { display: inline-flex; align-items: center; gap: 6px; font-size: 12.5px; color: #cfd5e4; }
.dot { width: 9px; height: 9px; border-radius: 50%; background: var(--ok); display: inline-block; }
.dot.off { background: var(--bad); } .dot.paused { background: var(--warn); }
button { font: inherit; font-size: 12.5px; border: 1px solid var(--line); background: #fff; color: var(--ink); border-radius: 6px; padding: 4px 10px; cursor: pointer; }
header button { background: #242b3b; color: #fff; border-color: #364057; }
button:hover { border-color: var(--accent); }
main { padding: 16px 20px 28px; display: grid; grid-template-columns: repeat(12, 1fr); gap: 16px; max-width: 1500px; margin: 0 auto; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 14px 16px; min-width: 0; }
.card h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .6px; color: var(--muted); margin: 0 0 10px; font-weight: 650; display: flex; align-items: center; gap: 8px; }
.card h2 .count { background: var(--accent-soft); color: var(--accent); border-radius: 10px; padding: 0 8px; font-size: 12px; letter-spacing: 0; }
.span-12 { grid-column: span 12; } .span-9 { grid-column: span 9; } .span-3 { grid-column: span 3; } .span-8 { grid-column: span 8; } .span-7 { grid-column: span 7; } .span-6 { grid-column: span 6; } .span-5 { grid-column: span 5; } .span-4 { grid-column: span 4; }
@media (max-width: 1000px) { .span-9, .span-3, .span-8, .span-7, .span-6, .span-5, .span-4 { grid-column: span 12; } }
.stats { display: grid; grid-template-columns: repeat(3, 1fr); gap: 10px; }
.stat { background: var(--bg); border-radius: 8px; padding: 8px 10px; }
.stat .v { font-size: 20px; font-weight: 650; font-variant-numeric: tabular-nums; }
.stat .k { font-size: 12px; color: var(--muted); }
table { width: 100%; border-collapse: collapse; font-size: 13px; }
th { text-align: left; font-weight: 600; color: var(--muted); font-size: 12px; border-bottom: 1px solid var(--line); padding: 6px 8px; white-space: nowrap; }
td { border-bottom: 1px solid var(--line); padding: 6px 8px; vertical-align: top; }
tr:last-child td { border-bottom: 0; }
.mono { font-family: var(--mono); font-size: 12px; }
.muted { color: var(--muted); }
.empty { color: var(--muted); padding: 14px 8px; text-align: center; font-size: 13px; }
.scroll { max-height: 340px; overflow: auto; }
.badge { display: inline-block; border-radius: 5px; padding: 0 6px; font-size: 11.5px; font-weight: 600; line-height: 18px; }
.b-ws { background: #e6f6ed; color: var(--ok); } .b-poll { background: #fdf3e1; color: var(--warn); }
.b-room { background: var(--accent-soft); color: var(--accent); } .b-user { background: #f1e9fd; color: #7a3fd6; } .b-sock { background: #eef0f4; color: #4b5366; }
.chip { display: inline-flex; align-items: center; gap: 4px; background: var(--bg); border-radius: 10px; padding: 0 7px; margin: 1px 2px 1px 0; font-size: 12px; }
.chip .dot { width: 7px; height: 7px; background: #c4c9d4; } .chip .dot.on { background: var(--ok); } .chip .dot.in { background: var(--accent); }
.ev-name { font-family: var(--mono); font-size: 12.5px; font-weight: 600; }
details summary { cursor: pointer; font-family: var(--mono); font-size: 12px; color: #39415a; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 560px; }
details pre { margin: 6px 0 0; background: #0f1420; color: #d8dee9; padding: 10px; border-radius: 6px; font-size: 12px; max-height: 320px; overflow: auto; white-space: pre-wrap; word-break: break-word; }
.filters { display: flex; gap: 8px; flex-wrap: wrap; align-items: center; margin-bottom: 10px; }
.filters label { font-size: 12px; color: var(--muted); display: flex; align-items: center; gap: 6px; }
input, select { font: inherit; font-size: 13px; border: 1px solid var(--line); border-radius: 6px; padding: 4px 8px; background: #fff; min-width: 290px; }
.note { font-size: 12px; color: var(--muted); margin-top: 8px; }
.tok { font-family: var(--mono); font-size: 11.5px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 1100px; background: var(--bg); border-radius: 6px; padding: 4px 8px; margin: 2px 0; cursor: copy; }
.tok.copied { background: #e6f6ed; }
.banner { grid-column: span 12; background: #fff4f4; border: 1px solid #f3c4c4; color: #8a1f1f; border-radius: 10px; padding: 10px 14px; display: none; }
svg text { font-family: system-ui, sans-serif; font-size: 10px; fill: var(--muted); }
.legend { display: flex; gap: 14px; font-size: 12px; color: var(--muted); margin-top: 4px; }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; vertical-align: -1px; }
nav.tabs { background: #1d2333; padding: 0 20px; display: flex; gap: 4px; }
nav.tabs button { background: transparent; border: 0; border-bottom: 2px solid transparent; border-radius: 0; color: #aab3c8; padding: 9px 14px; font-size: 13px; }
nav.tabs button.active { color: #fff; border-bottom-color: var(--accent); }
.kinds { display: flex; flex-direction: column; gap: 4px; }
.kinds button { text-align: left; display: flex; justify-content: space-between; }
.kinds button.active { background: var(--accent-soft); border-color: var(--accent); color: var(--accent); }
.toolbar { display: flex; gap: 8px; flex-wrap: wrap; align-items: center; margin: 10px 0; }
.pager { display: flex; gap: 8px; align-items: center; margin-top: 8px; font-size: 12.5px; color: var(--muted); }
button.danger { color: var(--bad); } button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
td.cell { max-width: 260px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
tr.edit-row td { background: var(--accent-soft); }
tr.edit-row input { min-width: 0; width: 110px; margin-right: 6px; }
tr.edit-row input[name=content] { width: 260px; }
textarea { width: 100%; min-height: 160px; font-family: var(--mono); font-size: 12px; border: 1px solid var(--line); border-radius: 6px; padding: 8px; }
.status { font-size: 12.5px; } .status.ok { color: var(--ok); } .status.bad { color: var(--bad); }
.rq-method { font-family: var(--mono); font-weight: 650; font-size: 12px; }
.st-2 { color: var(--ok); } .st-3 { color: var(--muted); } .st-4 { color: var(--warn); } .st-5 { color: var(--bad); }
.kv { font-family: var(--mono); font-size: 11.5px; color: #39415a; }
[hidden] { display: none !important; }
</style>
</head>
<body>
<header>
  <h1>TouchSync Inspector</h1>
  <span class="sub" id="version">connecting…</span>
  <span class="spacer"></span>
  <span class="live"><span class="dot" id="live-dot"></span><span id="live-text">live</span></span>
  <button id="pause" type="button">Pause</button>
</header>
<nav class="tabs" id="tabs">
  <button type="button" data-view="live" class="active">Live</button>
  <button type="button" data-view="data">Data</button>
  <button type="button" data-view="requests">Requests</button>
</nav>
<main id="view-live">
  <div class="banner" id="banner"></div>

  <section class="card span-7" id="requests-card">
    <h2>Requests <span class="muted" style="text-transform:none;letter-spacing:0;font-weight:400">last 5 minutes, per second</span></h2>
    <div class="stats" style="grid-template-columns: repeat(4, 1fr); margin-bottom: 10px">
      <div class="stat"><div class="v" id="rq-rate">0</div><div class="k">req/s (last 10 s)</div></div>
      <div class="stat"><div class="v" id="rq-avg">–</div><div class="k">avg latency (1 min)</div></div>
      <div class="stat"><div class="v" id="rq-max">–</div><div class="k">max latency (1 min)</div></div>
      <div class="stat"><div class="v" id="rq-err">0</div><div class="k">4xx / 5xx (5 min)</div></div>
    </div>
    <svg id="chart" viewBox="0 0 640 150" width="100%" height="150" role="img" aria-label="requests per second and latency"></svg>
    <div class="legend"><span><i style="background:#9db5fb"></i>requests/s</span><span><i style="background:#d64545"></i>errors/s</span><span><i style="background:#1f9d55"></i>avg latency (ms, right axis)</span><span id="rq-note"></span></div>
  </section>

  <section class="card span-5" id="overview-card">
    <h2>Realtime</h2>
    <div class="stats">
      <div class="stat"><div class="v" id="ov-sockets">0</div><div class="k">sockets</div></div>
      <div class="stat"><div class="v" id="ov-ws">0</div><div class="k">websocket</div></div>
      <div class="stat"><div class="v" id="ov-poll">0</div><div class="k">polling</div></div>
      <div class="stat"><div class="v" id="ov-emitted">0</div><div class="k">event packets sent</div></div>
      <div class="stat"><div class="v" id="ov-dropped">0</div><div class="k">dropped</div></div>
      <div class="stat"><div class="v" id="ov-slow">0</div><div class="k">slow consumers cut</div></div>
    </div>
    <div class="note" id="ov-urls"></div>
  </section>

  <section class="card span-12" id="demo-card" style="display:none">
    <h2>Demo users <span class="muted" style="text-transform:none;letter-spacing:0;font-weight:400">demo mode: fresh tokens, click one to copy</span></h2>
    <table><thead><tr><th>user</th><th>password</th><th>Authorization header and a curl example</th></tr></thead><tbody id="demo-body"></tbody></table>
  </section>

  <section class="card span-6" id="sockets-card">
    <h2>Connected sockets <span class="count" id="sockets-count">0</span></h2>
    <div class="scroll"><table><thead><tr><th>socket</th><th>user</th><th>transport</th><th>rooms</th><th>connected</th><th></th></tr></thead>
    <tbody id="sockets-body"></tbody></table></div>
  </section>

  <section class="card span-6" id="rooms-card">
    <h2>Rooms <span class="count" id="rooms-count">0</span></h2>
    <div class="scroll"><table><thead><tr><th>room</th><th>members</th><th title="elements">elements</th><th title="sockets that joined the room">sockets</th><th>last activity</th></tr></thead>
    <tbody id="rooms-body"></tbody></table></div>
  </section>

  <section class="card span-12" id="events-card">
    <h2>Events <span class="count" id="events-count">0</span> <span class="muted" style="text-transform:none;letter-spacing:0;font-weight:400">emitted by the server, newest first</span></h2>
    <div class="filters">
      <label>event <input id="f-event" list="event-names" placeholder="any event, e.g. element:reaction:added" autocomplete="off"></label>
      <label>room <input id="f-room" list="room-ids" placeholder="any room id" autocomplete="off"></label>
      <button id="f-clear" type="button">Clear filters</button>
      <span class="muted" id="events-note" style="font-size:12px"></span>
      <datalist id="event-names"></datalist><datalist id="room-ids"></datalist>
    </div>
    <div class="scroll" style="max-height: 520px"><table><thead><tr><th>#</th><th>time</th><th>event</th><th>to</th><th title="sockets that received it">recipients</th><th>payload</th></tr></thead>
    <tbody id="events-body"></tbody></table></div>
  </section>
</main>
<main id="view-data" hidden>
  <section class="card span-3" id="kinds-card">
    <h2>Data</h2>
    <div class="kinds" id="kinds"></div>
    <div id="data-actions" hidden>
      <h2 style="margin-top:16px">Test / demo mode</h2>
      <div class="toolbar" style="flex-direction:column;align-items:stretch">
        <button type="button" id="data-load-open">Load fixtures…</button>
        <button type="button" id="data-export">Export dataset</button>
        <button type="button" class="danger" id="data-reset">Reset all data</button>
      </div>
    </div>
    <div class="note" id="data-mode"></div>
  </section>
  <section class="card span-9" id="table-card">
    <h2><span id="data-title">Users</span> <span class="count" id="data-total">0</span></h2>
    <div class="status" id="data-status"></div>
    <div id="fixtures-panel" hidden>
      <p class="note">Paste a fixture document (docs/test-mode.md) or pick a file, then load it. Objects are created through the API's services.</p>
      <input type="file" id="fixtures-file" accept="application/json,.json">
      <textarea id="fixtures-text" spellcheck="false" placeholder='{"users": [{"username": "alice", "password": "alice-password"}]}'></textarea>
      <div class="toolbar"><button type="button" class="primary" id="fixtures-load">Load</button><button type="button" id="fixtures-cancel">Cancel</button></div>
    </div>
    <div class="scroll" style="max-height:none"><table><thead id="data-head"></thead><tbody id="data-body"></tbody></table></div>
    <div class="pager"><button type="button" id="data-first">« First</button><button type="button" id="data-next">Next »</button><span id="data-info"></span></div>
  </section>
  <section class="card span-12" id="room-card" hidden>
    <h2>Room <span id="room-title" style="text-transform:none;letter-spacing:0;color:var(--ink)"></span> <button type="button" id="room-close">Close</button></h2>
    <div id="room-sections"></div>
  </section>
</main>
<main id="view-requests" hidden>
  <section class="card span-12" id="requests-log-card">
    <h2>Requests <span class="count" id="rl-count">0</span> <span class="muted" style="text-transform:none;letter-spacing:0;font-weight:400" id="rl-note">newest first; Authorization, passwords and tokens redacted</span></h2>
    <div class="toolbar"><button type="button" id="rl-refresh">Refresh</button><label class="muted" style="font-size:12px"><input type="checkbox" id="rl-auto" checked style="min-width:0"> follow</label></div>
    <table><thead><tr><th>#</th><th>time</th><th>method</th><th>path</th><th>status</th><th>duration</th><th>bytes in / out</th></tr></thead><tbody id="rl-body"></tbody></table>
  </section>
</main>
<script>
"use strict";
(function () {
  const MAX_EVENTS = 500;
  const state = { paused: false, lastSeq: null, events: [], filterKey: "", eventNames: new Set(), rooms: [], ok: false, loadedOnce: false, demoLoaded: false };

  // Admin token: read once from ?token=, keep for this tab, drop it from the address bar.
  const params = new URLSearchParams(location.search);
  let token = params.get("token");
  if (token) {
    try { sessionStorage.setItem("touchsync-inspector-token", token); } catch (e) {}
    params.delete("token");
    history.replaceState(null, "", location.pathname + (params.toString() ? "?" + params : "") + location.hash);
  } else {
    try { token = sessionStorage.getItem("touchsync-inspector-token"); } catch (e) {}
  }

  const $ = (id) => document.getElementById(id);
  function el(tag, props, ...children) {
    const n = document.createElement(tag);
    if (props) for (const [k, v] of Object.entries(props)) {
      if (k === "class") n.className = v; else if (k === "text") n.textContent = v;
      else if (k.startsWith("data-")) n.setAttribute(k, v); else if (k === "title") n.title = v; else n[k] = v;
    }
    for (const c of children) if (c !== null && c !== undefined) n.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return n;
  }
  function replaceRows(tbody, rows, emptyText, columns) {
    tbody.replaceChildren(...(rows.length ? rows : [el("tr", null, el("td", { class: "empty", colSpan: columns, text: emptyText }))]));
  }
  async function api(path) {
    const headers = token ? { Authorization: "Bearer " + token } : {};
    const r = await fetch("/inspector/api/" + path, { headers, cache: "no-store" });
    if (!r.ok) { const t = await r.text(); throw Object.assign(new Error(t || ("HTTP " + r.status)), { status: r.status }); }
    return r.json();
  }
  function ago(unixSeconds, now) {
    let s = Math.max(0, Math.round(now - unixSeconds));
    if (s < 60) return s + " s ago";
    const m = Math.floor(s / 60); s %= 60;
    if (m < 60) return m + " min " + s + " s ago";
    const h = Math.floor(m / 60); return h + " h " + (m % 60) + " min ago";
  }
  function clock(ms) { const d = new Date(ms); return d.toLocaleTimeString([], { hour12: false }) + "." + String(d.getMilliseconds()).padStart(3, "0"); }
  function fmtMs(v) { return v >= 100 ? v.toFixed(0) + " ms" : v >= 10 ? v.toFixed(1) + " ms" : v.toFixed(2) + " ms"; }
  function short(id) { return id && id.length > 12 ? id.slice(0, 8) + "…" : id; }
  function setBanner(text) { const b = $("banner"); b.textContent = text || ""; b.style.display = text ? "block" : "none"; }

  // --- overview -------------------------------------------------------------------------
  let serverNow = Date.now() / 1000;
  function renderOverview(o) {
    serverNow = o.now;
    $("version").textContent = "v" + o.version + " · up " + ago(o.startedAt, o.now).replace(" ago", "") + (o.demo ? " · demo mode" : "");
    $("ov-sockets").textContent = o.sockets.total; $("ov-ws").textContent = o.sockets.websocket; $("ov-poll").textContent = o.sockets.polling;
    $("ov-emitted").textContent = o.realtime.eventsEmitted; $("ov-dropped").textContent = o.realtime.eventsDropped;
    $("ov-slow").textContent = o.realtime.slowConsumersDisconnected;
    $("ov-urls").textContent = "REST " + location.origin + "/api · Socket.IO " + location.origin + "/socket.io/ · events kept: " + o.events.capacity;
    if (o.demo && !state.demoLoaded) { state.demoLoaded = true; loadDemo(); }
  }

  // --- sockets --------------------------------------------------------------------------
  let socketsKickable = null;  // test or demo mode (browse's `editable`): a Disconnect button per socket (a server disconnect)
  async function kickSocket(id) {
    try { const d = await send("POST", "sockets/" + encodeURIComponent(id) + "/disconnect"); status("Sent a server disconnect to socket " + d.socketId + " (it will not reconnect)", true); }
    catch (e) { status("Disconnect failed: " + e.message); }
  }
  function renderSockets(d) {
    if (socketsKickable === null) { socketsKickable = false; api("browse").then((b) => { socketsKickable = b.editable; }, () => {}); }
    $("sockets-count").textContent = d.total;
    const rows = d.sockets.slice().reverse().map((s) => el("tr", { "data-socket": s.id },
      el("td", { class: "mono", title: "socket " + s.id + "\nEngine.IO session " + s.engineSessionId + (s.remoteAddress ? "\nfrom " + s.remoteAddress : "") }, short(s.id)),
      el("td", null, s.username ? el("span", { title: s.userId }, s.username) : el("span", { class: "muted", text: s.userId ? short(s.userId) : "anonymous" })),
      el("td", null, el("span", { class: "badge " + (s.transport === "websocket" ? "b-ws" : "b-poll"), text: s.transport })),
      el("td", null, ...(s.roomIds.length ? s.roomIds.map((r) => el("span", { class: "chip mono", title: r, text: roomLabel(r) })) : [el("span", { class: "muted", text: "none" })])),
      el("td", { title: s.connectedAtISO, style: "white-space:nowrap" }, ago(s.connectedAt, serverNow)),
      el("td", null, socketsKickable ? el("button", { type: "button", class: "danger kick-socket", "data-socket": s.id, title: "Socket.IO DISCONNECT: the client must not reconnect", onclick: () => kickSocket(s.id) }, "Disconnect") : "")));
    replaceRows($("sockets-body"), rows, "No socket connected. Connect a Socket.IO client to " + location.origin + "/socket.io/ with auth: {token}.", 6);
  }

  // --- rooms ----------------------------------------------------------------------------
  const roomNames = new Map();
  function roomLabel(id) { const n = roomNames.get(id); return n ? n : short(id); }
  function renderRooms(d) {
    $("rooms-count").textContent = d.total;
    state.rooms = d.rooms;
    for (const r of d.rooms) roomNames.set(r.id, r.name);
    const rows = d.rooms.map((r) => el("tr", { "data-room": r.id },
      el("td", null, el("div", { text: r.name, style: "font-weight:600" }), el("div", { class: "mono muted", text: r.id })),
      el("td", null, ...r.members.map((m) => el("span", { class: "chip", title: m.inRoom ? "joined the room on a socket" : m.online ? "connected" : "offline" },
        el("span", { class: "dot" + (m.inRoom ? " in" : m.online ? " on" : "") }), m.username)),
        r.memberCount > r.members.length ? el("span", { class: "muted", text: " +" + (r.memberCount - r.members.length) }) : null),
      el("td", { class: "mono", text: r.elementCount }),
      el("td", { class: "mono", text: r.sockets }),
      el("td", { title: r.lastActivityAtISO, style: "white-space:nowrap" }, ago(r.lastActivityAt, serverNow))));
    replaceRows($("rooms-body"), rows, "No rooms yet.", 5);
    const list = $("room-ids");
    list.replaceChildren(...d.rooms.map((r) => el("option", { value: r.id, label: r.name })));
  }

  // --- events ---------------------------------------------------------------------------
  function filters() {
    const q = new URLSearchParams();
    const ev = $("f-event").value.trim(), room = $("f-room").value.trim();
    if (ev) q.set("event", ev); if (room) q.set("roomId", room);
    return q;
  }
  function targetCell(t) {
    if (t.type === "room") return el("span", { class: "badge b-room", title: t.name }, "room " + roomLabel(t.roomId));
    if (t.type === "user") return el("span", { class: "badge b-user", title: t.name }, "user " + short(t.userId));
    if (t.type === "socket") return el("span", { class: "badge b-sock", title: t.socketId }, "socket " + short(t.socketId));
    return el("span", { class: "badge b-sock", title: t.name || "" }, t.name || t.type);
  }
  function eventRow(e) {
    const json = JSON.stringify(e.payload);
    const pretty = JSON.stringify(e.args.length === 1 ? e.payload : e.args, null, 2);
    return el("tr", { class: "ev-row", "data-event": e.event, "data-seq": e.seq },
      el("td", { class: "mono muted", text: e.seq }),
      el("td", { class: "mono", style: "white-space:nowrap", text: clock(e.timestampMs) }),
      el("td", { class: "ev-name", text: e.event }),
      el("td", null, targetCell(e.target), e.except ? el("div", { class: "muted mono", style: "font-size:11px", text: "except " + short(e.except) }) : null),
      el("td", { class: "mono", text: e.recipients }),
      el("td", null, el("details", null, el("summary", { text: json && json.length > 140 ? json.slice(0, 140) + "…" : json }), el("pre", { class: "payload", text: pretty }))));
  }
  function renderEvents(fresh, missed) {
    const body = $("events-body");
    if (fresh === null) {
      replaceRows(body, state.events.slice().reverse().map(eventRow), "No events yet. Toggle a reaction or send a message and it appears here.", 6);
    } else if (fresh.length) {
      if (body.querySelector(".empty")) body.replaceChildren();
      const frag = document.createDocumentFragment();
      for (const e of fresh.slice().reverse()) frag.append(eventRow(e));
      body.prepend(frag);
      while (body.children.length > MAX_EVENTS) body.lastElementChild.remove();
    }
    $("events-count").textContent = state.events.length;
    if (missed > 0) $("events-note").textContent = missed + " older events were evicted before they could be shown";
    const list = $("event-names");
    if (list.children.length !== state.eventNames.size) list.replaceChildren(...[...state.eventNames].sort().map((n) => el("option", { value: n })));
  }
  // Applies one events page: a fresh tail (`reset`) or the events after state.lastSeq.
  function applyEvents(d, reset, key) {
    for (const e of d.events) state.eventNames.add(e.event);
    if (reset) {
      state.filterKey = key;
      state.events = d.events; state.lastSeq = d.lastSequence;
      $("events-note").textContent = state.filterKey ? "filtered" : "";
      renderEvents(null, 0);
      return;
    }
    state.lastSeq = d.events.length ? d.events[d.events.length - 1].seq : Math.max(state.lastSeq, d.lastSequence);
    state.events = state.events.concat(d.events).slice(-MAX_EVENTS);
    renderEvents(d.events, d.missed);
  }
  // The query for the next events page: the newest 200 after a filter change, else what follows lastSeq.
  function eventsQuery() {
    const q = filters(), key = q.toString(), reset = key !== state.filterKey || state.lastSeq === null;
    if (reset) q.set("limit", "200"); else { q.set("since", state.lastSeq); q.set("limit", "500"); }
    return { q, key, reset };
  }
  async function pollEvents() {
    const { q, key, reset } = eventsQuery();
    const d = await api("events?" + q);
    if (filters().toString() === key) applyEvents(d, reset, key);
  }

  // --- requests chart -------------------------------------------------------------------
  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, text) { const n = document.createElementNS(SVG, tag); for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v); if (text !== undefined) n.textContent = text; return n; }
  // The axis top: 4 gridline steps of 1, 2 or 5 times a power of ten.
  function niceMax(v, minStep) {
    const raw = Math.max(v, 1e-9) / 4, p = Math.pow(10, Math.floor(Math.log10(raw)));
    let step = 10 * p;
    for (const m of [1, 2, 5]) if (m * p >= raw) { step = m * p; break; }
    return 4 * Math.max(step, minStep);
  }
  function renderRequests(d) {
    const s = d.seconds, n = s.length;
    const last = (k) => s.slice(-k);
    const sum = (a, f) => a.reduce((x, y) => x + f(y), 0);
    $("rq-rate").textContent = (sum(last(10), (x) => x.requests) / 10).toFixed(1);
    const minute = last(60), reqMin = sum(minute, (x) => x.requests);
    $("rq-avg").textContent = reqMin ? fmtMs(sum(minute, (x) => x.avgLatencyMs * x.requests) / reqMin) : "–";
    const mx = Math.max(0, ...minute.map((x) => x.maxLatencyMs));
    $("rq-max").textContent = reqMin ? fmtMs(mx) : "–";
    $("rq-err").textContent = sum(s, (x) => x.clientErrors) + " / " + sum(s, (x) => x.serverErrors);
    $("rq-note").textContent = "(the inspector's own requests are not counted)";

    const W = 640, H = 150, L = 34, R = 40, T = 8, B = 20, pw = W - L - R, ph = H - T - B;
    const chart = $("chart"); chart.replaceChildren();
    const maxReq = niceMax(Math.max(...s.map((x) => x.requests)), 1);
    const maxLat = niceMax(Math.max(...s.map((x) => x.avgLatencyMs)), 0.25);
    for (let i = 0; i <= 4; i++) {
      const y = T + ph - (ph * i) / 4;
      chart.append(svg("line", { x1: L, x2: L + pw, y1: y, y2: y, stroke: "#e3e6ec", "stroke-width": 1 }));
      chart.append(svg("text", { x: L - 5, y: y + 3, "text-anchor": "end" }, +(maxReq * i / 4).toFixed(3)));
      chart.append(svg("text", { x: L + pw + 5, y: y + 3 }, +(maxLat * i / 4).toFixed(3) + (i === 4 ? " ms" : "")));
    }
    const bw = pw / n;
    for (let i = 0; i < n; i++) {
      const x = s[i]; if (!x.requests) continue;
      const h = (ph * x.requests) / maxReq, he = (ph * (x.clientErrors + x.serverErrors)) / maxReq;
      chart.append(svg("rect", { x: L + i * bw, y: T + ph - h, width: Math.max(1, bw - 0.4), height: h, fill: "#9db5fb" }));
      if (he > 0) chart.append(svg("rect", { x: L + i * bw, y: T + ph - he, width: Math.max(1, bw - 0.4), height: he, fill: "#d64545" }));
    }
    let path = "";
    for (let i = 0; i < n; i++) {
      if (!s[i].requests) continue;
      const x = L + i * bw + bw / 2, y = T + ph - (ph * s[i].avgLatencyMs) / maxLat;
      path += (path && s[i - 1] && s[i - 1].requests ? "L" : "M") + x.toFixed(1) + " " + y.toFixed(1);
    }
    if (path) chart.append(svg("path", { d: path, fill: "none", stroke: "#1f9d55", "stroke-width": 1.5 }));
    for (const back of [300, 240, 180, 120, 60, 0]) {
      if (back >= n) continue;
      const x = L + (n - 1 - back) * bw + bw / 2;
      chart.append(svg("text", { x, y: H - 5, "text-anchor": "middle" }, back ? "-" + (back / 60) + " min" : "now"));
    }
  }

  // --- demo -----------------------------------------------------------------------------
  async function loadDemo() {
    try {
      const d = await api("demo");
      if (!d.demo || !d.users.length) return;
      $("demo-card").style.display = "";
      $("demo-body").replaceChildren(...d.users.map((u) => {
        const header = "Authorization: Bearer " + u.token;
        const curl = "curl -H '" + header + "' " + location.origin + "/api/rooms/my-rooms";
        const copyable = (text) => {
          const n = el("div", { class: "tok", title: text + "\n(click to copy)", text });
          n.onclick = () => { if (navigator.clipboard) navigator.clipboard.writeText(text).then(() => { n.classList.add("copied"); setTimeout(() => n.classList.remove("copied"), 800); }); };
          return n;
        };
        return el("tr", { "data-demo-user": u.username }, el("td", { style: "font-weight:600", text: u.username }),
          el("td", { class: "mono", style: "white-space:nowrap", text: u.password }),
          el("td", null, copyable(header), copyable(curl)));
      }));
    } catch (e) { state.demoLoaded = false; }
  }

  // --- loop -----------------------------------------------------------------------------
  let busy = false;
  async function tick() {
    if (busy || state.paused) return;
    busy = true;
    try {
      // One request a second: everything but the demo users (loaded once).
      const { q, key, reset } = eventsQuery();
      q.set("seconds", "300");
      const d = await api("snapshot?" + q);
      renderOverview(d.overview); renderRooms(d.rooms); renderSockets(d.sockets); renderRequests(d.requests);
      if (filters().toString() === key) applyEvents(d.events, reset, key);
      setBanner(""); $("live-dot").className = "dot"; $("live-text").textContent = "live";
      state.ok = true;
      if (!state.loadedOnce) { state.loadedOnce = true; document.body.setAttribute("data-ready", "1"); }
      document.body.setAttribute("data-last-seq", state.lastSeq);
    } catch (e) {
      state.ok = false; $("live-dot").className = "dot off"; $("live-text").textContent = "disconnected";
      setBanner(e.status === 401 ? "The inspector needs the admin token: open /inspector?token=<inspector.adminToken>." : "Cannot reach the server: " + e.message);
    } finally { busy = false; }
  }
  $("pause").onclick = () => {
    state.paused = !state.paused;
    $("pause").textContent = state.paused ? "Resume" : "Pause";
    $("live-dot").className = state.paused ? "dot paused" : "dot"; $("live-text").textContent = state.paused ? "paused" : "live";
    if (!state.paused) tick();
  };
  async function refilter() {
    if (busy) return;  // the next tick applies the new filter
    busy = true;
    try { await pollEvents(); } catch (e) {} finally { busy = false; }
  }
  for (const id of ["f-event", "f-room"]) $(id).addEventListener("input", refilter);
  $("f-clear").onclick = () => { $("f-event").value = ""; $("f-room").value = ""; refilter(); };
  // --- views ----------------------------------------------------------------------------
  const views = ["live", "data", "requests"];
  function show(view) {
    for (const v of views) $("view-" + v).hidden = v !== view;
    for (const b of $("tabs").querySelectorAll("button")) b.classList.toggle("active", b.dataset.view === view);
    document.body.setAttribute("data-view", view);
    if (view === "data") openData();
    if (view === "requests") loadRequestsLog();
  }
  for (const b of $("tabs").querySelectorAll("button")) b.onclick = () => show(b.dataset.view);

  async function send(method, path, body) {
    const headers = { "X-Inspector-Action": "1" };
    if (token) headers.Authorization = "Bearer " + token;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const r = await fetch("/inspector/api/" + path, { method, headers, body: body === undefined ? undefined : (typeof body === "string" ? body : JSON.stringify(body)), cache: "no-store" });
    const text = await r.text();
    let json = null; try { json = JSON.parse(text); } catch (e) {}
    if (!r.ok) {
      const msg = json && json.error ? (json.error.message + (json.error.field ? " (" + json.error.field + ")" : "")) : (text || "HTTP " + r.status);
      throw Object.assign(new Error(msg), { status: r.status });
    }
    return json;
  }
  function status(text, ok) { const n = $("data-status"); n.textContent = text || ""; n.className = "status " + (ok ? "ok" : "bad"); }

  // --- data browser ---------------------------------------------------------------------
  const data = { kinds: [], editable: false, kind: "users", cursors: [null], loaded: false, room: null };
  function cellText(v, col) {
    if (v === null || v === undefined) return "";
    if (typeof v === "number" && col && col.endsWith("At") && v > 1e9) return new Date(v * 1000).toISOString().slice(0, 19).replace("T", " ");
    return typeof v === "object" ? JSON.stringify(v) : String(v);
  }
  // Every column of the page but those fixed by a filter (a room's own id in its sections).
  function columnsOf(rows, filters) { const cols = []; for (const r of rows) for (const k of Object.keys(r)) if (!cols.includes(k) && !(k in filters)) cols.push(k); return cols; }

  // An answer that arrives after its table moved on (another kind chosen, another room opened, a
  // later page asked for) is dropped, not drawn over the newer one; the count is for the tests.
  function dropStale() { document.body.dataset.staleAnswers = String(Number(document.body.dataset.staleAnswers || 0) + 1); return false; }

  // One paged table: kind + filters, rendered into thead/tbody with its own pager. `opts.current()`
  // says whether the table still belongs to this pager. `load` answers whether it drew the page.
  function makePager(kind, filters, els, opts) {
    const p = { kind, filters, cursors: [null], page: 0, rows: [], next: null, key: null, asked: 0 };
    p.load = async (cursor, index) => {
      const q = new URLSearchParams(filters); q.set("limit", "25"); if (cursor) q.set("after", cursor);
      const ticket = ++p.asked;
      const d = await api("browse/" + kind + "?" + q);
      if (ticket !== p.asked || (opts.current && !opts.current())) return dropStale();
      p.rows = d.rows; p.next = d.next; p.key = d.key; p.page = index;
      p.cursors[index + 1] = d.next;
      render(d);
      return true;
    };
    function render(d) {
      const cols = columnsOf(d.rows, filters);
      els.head.replaceChildren(el("tr", null, ...cols.map((c) => el("th", { text: c })), el("th", null, "")));
      const rows = [];
      for (const r of d.rows) {
        const key = d.key ? r[d.key] : null;
        const actions = el("td", { style: "white-space:nowrap" });
        if (opts.openRoom) actions.append(el("button", { type: "button", class: "open-room", "data-room": r.id, onclick: () => openRoom(r.id, r.name) }, "Open"));
        if (data.editable && kind === "elements") actions.append(" ", el("button", { type: "button", class: "edit-element", "data-id": r.id, onclick: (ev) => editRow(ev.target.closest("tr"), r, p) }, "Edit"));
        if (data.editable && key) actions.append(" ", el("button", { type: "button", class: "danger delete-row", "data-key": key, onclick: (ev) => confirmTwice(ev.target, () => deleteRow(p, key)) }, "Delete"));
        rows.push(el("tr", { "data-key": key === null ? "" : String(key) }, ...cols.map((c) => el("td", { class: "cell mono", title: cellText(r[c]), text: cellText(r[c], c) })), actions));
      }
      replaceRows(els.body, rows, "No rows.", cols.length + 1);
      els.info.textContent = d.total ? ("rows " + (p.page * 25 + (d.rows.length ? 1 : 0)) + "–" + (p.page * 25 + d.rows.length) + " of " + d.total) : "empty";
      els.next.disabled = !d.next; els.first.disabled = p.page === 0;
      if (els.total) els.total.textContent = d.total;
    }
    els.next.onclick = () => p.load(p.cursors[p.page + 1], p.page + 1).catch((e) => status(e.message));
    els.first.onclick = () => p.load(null, 0).catch((e) => status(e.message));
    p.reload = () => p.load(p.cursors[p.page], p.page);
    return p;
  }

  let mainPager = null;
  async function openData() {
    if (!data.loaded) {
      const d = await api("browse");
      data.kinds = d.kinds; data.editable = d.editable; data.loaded = true;
      $("data-actions").hidden = !d.editable;
      $("data-mode").textContent = d.editable ? "Test or demo mode: rows can be edited and deleted." : "Read-only: start the server with --test-mode or --demo to edit data here.";
      $("kinds").replaceChildren(...d.kinds.filter((k) => !["members"].includes(k.name)).map((k) =>
        el("button", { type: "button", "data-kind": k.name, onclick: () => selectKind(k.name) }, k.title)));
    }
    await selectKind(data.kind);
  }
  async function selectKind(name) {
    data.kind = name;
    const k = data.kinds.find((x) => x.name === name);
    $("data-title").textContent = k ? k.title : name;
    for (const b of $("kinds").querySelectorAll("button")) b.classList.toggle("active", b.dataset.kind === name);
    const pager = makePager(name, {}, { head: $("data-head"), body: $("data-body"), next: $("data-next"), first: $("data-first"), info: $("data-info"), total: $("data-total") },
                            { openRoom: name === "rooms", current: () => mainPager === pager });
    mainPager = pager;
    try { if (await pager.load(null, 0)) document.body.setAttribute("data-kind", name); } catch (e) { if (mainPager === pager) status(e.message); }
  }

  const roomPagers = [];
  async function openRoom(id, name) {
    data.room = id;
    $("room-card").hidden = false;
    $("room-title").textContent = (name || "") + " · " + id;
    const sections = $("room-sections"); sections.replaceChildren(); roomPagers.length = 0;
    for (const [kind, title] of [["members", "Members"], ["elements", "Elements"], ["messages", "Messages"]]) {
      const head = el("thead"), body = el("tbody", { id: "room-" + kind + "-body" }), next = el("button", { type: "button", text: "Next »" }),
            first = el("button", { type: "button", text: "« First" }), info = el("span"), total = el("span", { class: "count" });
      sections.append(el("h2", { style: "margin-top:12px" }, title + " ", total),
        el("div", { class: "scroll", id: "room-" + kind }, el("table", null, head, body)), el("div", { class: "pager" }, first, next, info));
      const p = makePager(kind, { roomId: id }, { head, body, next, first, info, total }, { current: () => data.room === id && roomPagers.includes(p) });
      roomPagers.push(p);
      if (!await p.load(null, 0)) return;  // another room was opened meanwhile: its sections are in place
    }
    document.body.setAttribute("data-room-open", id);
    $("room-card").scrollIntoView({ block: "start" });
  }
  $("room-close").onclick = () => { $("room-card").hidden = true; data.room = null; };

  // Two clicks within 4 s: no confirm() dialog (it blocks the page).
  function confirmTwice(button, action) {
    if (button.dataset.armed === "1") { button.dataset.armed = ""; button.textContent = button.dataset.label; action(); return; }
    button.dataset.label = button.textContent; button.dataset.armed = "1"; button.textContent = "Click again to confirm";
    setTimeout(() => { if (button.dataset.armed === "1") { button.dataset.armed = ""; button.textContent = button.dataset.label; } }, 4000);
  }
  async function deleteRow(p, key) {
    try {
      const q = p.filters.roomId ? "?roomId=" + encodeURIComponent(p.filters.roomId) : "";
      await send("DELETE", "rows/" + p.kind + "/" + encodeURIComponent(key) + q);
      status("Deleted " + p.kind + " " + key, true);
      await p.reload();
    } catch (e) { status("Delete failed: " + e.message); }
  }
  const editable = ["content", "positionX", "positionY", "width", "height", "imageUrl"];
  function editRow(tr, row, p) {
    if (tr.nextElementSibling && tr.nextElementSibling.classList.contains("edit-row")) { tr.nextElementSibling.remove(); return; }
    const inputs = editable.map((f) => el("label", { class: "muted", style: "font-size:11.5px" }, f + " ",
      el("input", { name: f, value: row[f] === null || row[f] === undefined ? "" : String(row[f]) })));
    const save = el("button", { type: "button", class: "primary save-element", "data-id": row.id }, "Save");
    const edit = el("tr", { class: "edit-row", "data-id": row.id }, el("td", { colSpan: tr.children.length }, ...inputs, save));
    save.onclick = async () => {
      const body = {};
      for (const input of edit.querySelectorAll("input")) {
        const f = input.name, v = input.value, old = row[f] === null || row[f] === undefined ? "" : String(row[f]);
        if (v === old) continue;
        body[f] = f.startsWith("position") || f === "width" || f === "height" ? Number(v) : (v === "" ? null : v);
      }
      try {
        await send("PATCH", "elements/" + encodeURIComponent(row.id), body);
        status("Saved element " + row.id + " (element:updated was emitted)", true);
        await p.reload();
      } catch (e) { status("Save failed: " + e.message); }
    };
    tr.after(edit);
  }
  $("data-reset").onclick = (ev) => confirmTwice(ev.target, async () => {
    try { const d = await send("POST", "reset"); status("Reset: " + d.tables.length + " tables emptied, " + d.disconnectedSockets + " sockets disconnected", true); $("room-card").hidden = true; await selectKind(data.kind); }
    catch (e) { status("Reset failed: " + e.message); }
  });
  $("data-load-open").onclick = () => { $("fixtures-panel").hidden = false; $("fixtures-text").focus(); };
  $("fixtures-cancel").onclick = () => { $("fixtures-panel").hidden = true; };
  $("fixtures-file").onchange = () => { const f = $("fixtures-file").files[0]; if (f) f.text().then((t) => { $("fixtures-text").value = t; }); };
  $("fixtures-load").onclick = async () => {
    try {
      const d = await send("POST", "fixtures", $("fixtures-text").value);
      status("Loaded " + Object.entries(d.counts).filter(([, n]) => n).map(([k, n]) => n + " " + k).join(", "), true);
      $("fixtures-panel").hidden = true;
      await selectKind(data.kind);
    } catch (e) { status("Load failed: " + e.message); }
  };
  $("data-export").onclick = async () => {
    try {
      const d = await api("export");
      const a = el("a", { href: "data:application/json;charset=utf-8," + encodeURIComponent(JSON.stringify(d, null, 2)), download: "touchsync-export.json" });
      document.body.append(a); a.click(); a.remove();
      status("Exported " + d.users.length + " users, " + d.rooms.length + " rooms, " + d.elements.length + " elements", true);
    } catch (e) { status("Export failed: " + e.message); }
  };

  // --- request list ---------------------------------------------------------------------
  const rl = { lastSeq: 0, rows: [] };
  function headersText(h) { return h.map(([k, v]) => k + ": " + v).join("\n"); }
  function bodyText(b) { return b === null ? "(empty)" : b.json !== undefined ? JSON.stringify(b.json, null, 2) : b.text; }
  function requestRow(r) {
    const detail = el("tr", { class: "rq-detail", hidden: true }, el("td", { colSpan: 7 },
      el("div", { class: "stats", style: "grid-template-columns:1fr 1fr" },
        el("div", null, el("div", { class: "k muted", text: "request" }), el("pre", { class: "kv rq-req-headers", text: headersText(r.request.headers) }),
           el("pre", { class: "payload rq-req-body", text: bodyText(r.request.body) + (r.request.truncated ? "\n… cut at " + r.request.body.text.length + " of " + r.request.bytes + " bytes" : "") })),
        el("div", null, el("div", { class: "k muted", text: "response" }), el("pre", { class: "kv rq-res-headers", text: headersText(r.response.headers) }),
           el("pre", { class: "payload rq-res-body", text: bodyText(r.response.body) + (r.response.truncated ? "\n… cut (" + r.response.bytes + " bytes)" : "") })))));
    const row = el("tr", { class: "rq-row", "data-seq": r.seq, "data-request-id": r.requestId, style: "cursor:pointer" },
      el("td", { class: "mono muted", text: r.seq }), el("td", { class: "mono", text: clock(r.timestampMs) }),
      el("td", { class: "rq-method", text: r.method }), el("td", { class: "mono cell", style: "max-width:520px", title: r.target, text: r.target }),
      el("td", { class: "mono st-" + String(r.status)[0], text: r.status }), el("td", { class: "mono", text: fmtMs(r.durationMs) }),
      el("td", { class: "mono muted", text: r.request.bytes + " / " + r.response.bytes }));
    row.onclick = () => { detail.hidden = !detail.hidden; };
    return [row, detail];
  }
  async function loadRequestsLog() {
    try {
      const d = await api("requests-log?limit=100");
      rl.lastSeq = d.lastSequence;
      $("rl-count").textContent = d.requests.length;
      $("rl-note").textContent = "the last " + d.capacity + " requests (bodies up to " + d.maxBodyBytes + " bytes), newest first; Authorization, passwords and tokens redacted; the inspector's and Socket.IO's own requests are not listed";
      // A refresh already under way when a row was opened lands after the click: the rows it
      // draws keep every detail that is open now, so a click is never undone by a refresh.
      const open = new Set([...document.querySelectorAll("#rl-body tr.rq-detail:not([hidden])")].map(t => t.previousElementSibling.dataset.seq));
      replaceRows($("rl-body"), d.requests.flatMap(r => {
        const [row, detail] = requestRow(r);
        if (open.has(String(r.seq))) detail.hidden = false;
        return [row, detail];
      }), "No requests yet.", 7);
      document.body.setAttribute("data-requests-seq", d.lastSequence);
    } catch (e) {
      replaceRows($("rl-body"), [], e.status === 404 ? "The request list is off (TOUCHSYNC_ENV=production or inspector.requestLogCapacity = 0)." : "Cannot load: " + e.message, 7);
    }
  }
  $("rl-refresh").onclick = loadRequestsLog;
  setInterval(() => { if (!$("view-requests").hidden && $("rl-auto").checked && !document.querySelector("#rl-body tr.rq-detail:not([hidden])")) loadRequestsLog(); }, 2000);

  tick();
  setInterval(tick, 1000);
})();
</script>
</body>
</html>
"""#
}
