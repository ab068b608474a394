"""`GET /asyncapi.json` of a real `touchsync serve`, read by asyncapi-python (PyPI: its AsyncAPI 3
parser resolves every reference and runs its validation rules; nobody here wrote it): a valid
AsyncAPI 3.0.0 document that names every Socket.IO event of docs/api.md in its direction, and whose
payload schemas hold for what a real Socket.IO client (python-socketio) gets: acks and events."""
import json
import os
import re

import jsonschema
import pytest
import requests

from conftest import ROOT
from test_realtime import clients  # noqa: F401  (the fixture: Socket.IO clients closed after the test)

asyncapi_parser = pytest.importorskip(
    "asyncapi_python_codegen.parser", reason="asyncapi-python[codegen] is not installed (conformance/requirements.txt)")


def docs_events():
    """The event names of docs/api.md's Socket.IO tables: (client → server, server → client)."""
    with open(os.path.join(ROOT, "docs", "api.md"), encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("\n## Socket.IO"):]

    def table(heading):
        rest = section[section.index(heading) + len(heading):]
        rest = rest[:rest.index("\n#")] if "\n#" in rest else rest
        return {m.group(1) for m in re.finditer(r"^\| `([a-z:]+)` \|", rest, re.M)}
    return table("### Client → server"), table("### Server → client")


@pytest.fixture(scope="module")
def document(server, tmp_path_factory):
    r = requests.get(server.url("/asyncapi.json"), timeout=10)
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"] == "application/json"
    doc = r.json()
    path = tmp_path_factory.mktemp("asyncapi") / "asyncapi.json"
    path.write_text(json.dumps(doc))
    # Parses and validates; raises asyncapi_python_codegen.validation.ValidationError on any error.
    operations = asyncapi_parser.extract_all_operations(path)
    return doc, operations


def test_document_is_valid_asyncapi_3_and_names_every_event_of_the_docs(document):
    doc, operations = document
    assert doc["asyncapi"] == "3.0.0"
    client, server_events = docs_events()
    assert len(client) == 7 and len(server_events) == 12, (client, server_events)
    received = {op.title for op in operations.values() if op.action == "receive"}
    sent = {op.title for op in operations.values() if op.action == "send"}
    assert received == client, f"in docs/api.md only: {client - received}; in /asyncapi.json only: {received - client}"
    assert sent == server_events, f"in docs/api.md only: {server_events - sent}; in /asyncapi.json only: {sent - server_events}"
    # Each parsed operation carries its event as a message of that wire name, with a payload schema.
    for op in operations.values():
        names = {m.name for m in op.messages}
        assert op.title in names, (op.title, names)
        assert all(isinstance(m.payload, dict) and m.payload for m in op.messages), op.title
    for name in client:
        op = next(o for o in operations.values() if o.title == name)
        assert op.reply is not None, f"{name} has no reply (its ack)"


def schema_of(doc, key):
    """The payload schema of message `key`, with the document's components so its $refs resolve."""
    payload = doc["components"]["messages"][key]["payload"]
    return {**payload, "components": doc["components"]}


def test_what_a_python_socketio_client_gets_matches_the_document(server, document, clients):
    doc, _ = document
    key = lambda name: name.replace(":", ".")
    alice, bob = server.register("alice"), server.register("bob")
    room = server.room(alice, members=[bob])
    server.element(alice, room)
    watcher = clients().connect(server, auth={"token": alice["token"]})
    actor = clients().connect(server, auth={"token": bob["token"]})
    acks = {}
    for c in (watcher, actor):
        acks["room:join"] = c.client.call("room:join", {"roomId": room}, timeout=10)

    def call(event, payload):
        acks[event] = actor.client.call(event, payload, timeout=10)
        assert "error" not in acks[event], (event, acks[event])
        return acks[event]
    element = call("element:create", {"roomId": room, "type": "note", "positionX": 1, "positionY": 2, "width": 3, "height": 4})["element"]
    call("element:update", {"roomId": room, "elementId": element["id"], "content": "edited"})
    call("element:reaction:toggle", {"roomId": room, "elementId": element["id"]})
    call("element:reaction:toggle", {"roomId": room, "elementId": element["id"]})
    requests.post(server.url(f"/api/rooms/{room}/messages"), json={"text": "hi"}, headers=server.auth(bob)).raise_for_status()
    requests.patch(server.url(f"/api/rooms/{room}"), json={"name": "Renamed"}, headers=server.auth(bob)).raise_for_status()
    call("element:delete", {"roomId": room, "elementId": element["id"]})
    call("room:clear", {"roomId": room})
    call("room:leave", {"roomId": room})
    acks["error"] = actor.client.call("room:join", {"roomId": "nope"}, timeout=10)
    assert acks["error"]["error"]["code"] == "NOT_FOUND"

    for event, ack in acks.items():
        name = "room:join" if event == "error" else event
        jsonschema.Draft7Validator(schema_of(doc, key(name) + ".ack")).validate(ack)
    _, server_events = docs_events()
    assert watcher.wait_for("room:cleared:global", timeout=10), watcher.events
    got = {}
    for event, payload in watcher.events:
        jsonschema.Draft7Validator(schema_of(doc, key(event))).validate(payload)
        got[event] = payload
    assert set(got) == server_events, f"not received: {server_events - set(got)}"


def test_every_message_example_holds_for_its_payload_schema(document):
    """Each message's `examples` (AsyncAPI 3.0.0 Message Object: Message Example Objects) is the
    payload type's declared example; jsonschema, not the server's own validator, checks each
    against the message's payload schema, formats included (`uuid`, `date-time`)."""
    doc, _ = document
    # Draft 7's checker has no `uuid` (a 2019-09 format); the 2020-12 one checks both.
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    assert {"uuid", "date-time"} <= set(checker.checkers), "jsonschema cannot check uuid and date-time here"
    messages = doc["components"]["messages"]
    assert len(messages) == 7 * 2 + 12, sorted(messages)
    for key, message in messages.items():
        examples = message.get("examples")
        assert isinstance(examples, list) and len(examples) == 1 and set(examples[0]) == {"payload"}, (key, examples)
        jsonschema.Draft7Validator(schema_of(doc, key), format_checker=checker).validate(examples[0]["payload"])
    # The check can fail: an id that is not a UUID is refused.
    bad = json.loads(json.dumps(messages["room.cleared"]["examples"][0]["payload"]))
    bad["clearedBy"] = "alice"
    with pytest.raises(jsonschema.ValidationError, match="uuid"):
        jsonschema.Draft7Validator(schema_of(doc, "room.cleared"), format_checker=checker).validate(bad)
