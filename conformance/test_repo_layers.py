"""The SwiftPM target graph is the architecture (Package.swift's header, docs/architecture.md
"Layers"): a lower layer never imports a higher one. SwiftPM does not enforce it by itself (a
module can import anything its dependencies built before it, transitively), so this reads
Package.swift and every source file: each target depends only on targets below it in LAYERS,
each file imports only package modules its target depends on (directly or through a dependency:
never one above it), and the
architecture page names every target. Needs no build and no server: it reads the working tree."""
import os
import re

from conftest import ROOT

# Every library and executable target of the package, lowest first. A target may depend only on
# targets listed before it; a new target is placed here (and in docs/architecture.md) on purpose.
LAYERS = [
    # system C libraries and the OS layer's C half
    "CSQLite", "CCrypto", "CTLS", "CSystem", "CCurl", "CPostgres",
    # building blocks
    "TSSync", "TSJSON", "TSCrypto",
    # storage
    "TSStorage",
    # transport
    "TSSockets", "TSTLS", "TSHTTP", "TSWebSocket", "TSEngineIO", "TSSocketIO", "TSRedis",
    # application, lowest first
    "TSDomain", "TSAPNs", "TSContract", "TSRealtime", "TSRoutes", "TSTestMode", "TSInspector", "TSApp",
    # executables and the app-facing kit
    "embed-migrations", "touchsync", "touchsync-bench", "storage-bench", "conformance-server", "TouchSyncTesting",
    # what the test targets share
    "TSStorageTestSupport", "TSTestSupport",
]

# What realtime must stay independent of: it sits between the domain and Socket.IO's users.
NEVER_BELOW = {
    "TSRealtime": {"TSRoutes", "TSTestMode", "TSInspector", "TSApp", "TSAPNs", "TSTLS"},
    "TSRoutes": {"TSTestMode", "TSInspector", "TSApp"},
    "TSContract": {"TSRealtime", "TSRoutes", "TSApp", "TSSocketIO", "TSHTTP"},
    "TSDomain": {"TSSockets", "TSHTTP", "TSSocketIO", "TSRedis", "TSContract", "TSRealtime", "TSRoutes", "TSApp"},
}

TARGET_START = re.compile(r"\.(target|executableTarget|systemLibrary|testTarget)\(\s*name:\s*\"([^\"]+)\"")
IMPORT = re.compile(r"^\s*(?:@\w+\s+)*import\s+(?:(?:struct|class|enum|func|protocol|typealias|var|let)\s+)?(\w+)", re.M)


def balanced(text, start):
    """The text from `start` (an opening bracket or parenthesis) to its matching close."""
    pairs = {"(": ")", "[": "]"}
    stack = []
    i = start
    in_string = False
    while i < len(text):
        c = text[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == "\"":
                in_string = False
        elif c == "\"":
            in_string = True
        elif c in pairs:
            stack.append(pairs[c])
        elif stack and c == stack[-1]:
            stack.pop()
            if not stack:
                return text[start:i + 1]
        i += 1
    raise AssertionError("unbalanced Package.swift from offset %d" % start)


def targets():
    """{name: (kind, path, [package target dependencies])} from Package.swift."""
    text = open(os.path.join(ROOT, "Package.swift")).read()
    # Only the package's own declaration (the fuzz targets are appended by a loop below it).
    out = {}
    for m in TARGET_START.finditer(text):
        kind, name = m.group(1), m.group(2)
        call = balanced(text, m.start() + len(kind) + 1)
        deps = []
        d = re.search(r"dependencies:\s*\[", call)
        if d:
            array = balanced(call, d.end() - 1)
            # Plain names and `.target(name: …)`; products (`.product(name:, package:)`) are not targets.
            without_products = re.sub(r"\.product\([^)]*\)", "", array)
            deps = re.findall(r"\"([^\"]+)\"", without_products)
        p = re.search(r"path:\s*\"([^\"]+)\"", call)
        default_root = "Tests" if kind == "testTarget" else "Sources"
        out[name] = (kind, p.group(1) if p else "%s/%s" % (default_root, name), deps)
    return out


def closure(graph, name):
    seen, todo = set(), list(graph[name][2])
    while todo:
        n = todo.pop()
        if n in seen or n not in graph:
            continue
        seen.add(n)
        todo += graph[n][2]
    return seen


def test_every_target_is_placed_in_a_layer():
    graph = targets()
    unplaced = sorted(n for n, (kind, _, _) in graph.items() if kind != "testTarget" and n not in LAYERS)
    assert not unplaced, "targets missing from LAYERS (place each in its layer): %s" % unplaced
    missing = sorted(n for n in LAYERS if n not in graph)
    assert not missing, "LAYERS names targets Package.swift does not declare: %s" % missing


def test_a_target_depends_only_on_lower_targets():
    graph = targets()
    rank = {n: i for i, n in enumerate(LAYERS)}
    wrong = []
    for name, (kind, _, deps) in graph.items():
        if kind == "testTarget" or name not in rank:
            continue
        for d in deps:
            if d in rank and rank[d] >= rank[name]:
                wrong.append("%s -> %s" % (name, d))
    assert not wrong, "dependencies on a target of the same or a higher layer: %s" % wrong


def test_realtime_contract_and_domain_never_reach_up():
    graph = targets()
    for name, forbidden in NEVER_BELOW.items():
        reached = closure(graph, name) & forbidden
        assert not reached, "%s depends (directly or not) on %s" % (name, sorted(reached))


def test_every_import_of_a_package_module_is_a_dependency():
    graph = targets()
    modules = {n.replace("-", "_"): n for n in graph}
    wrong = []
    checked = 0
    for name, (kind, path, deps) in graph.items():
        # Test targets may import what their dependencies bring along; the layers are the sources'.
        if kind in ("systemLibrary", "testTarget"):
            continue
        root = os.path.join(ROOT, path)
        allowed = closure(graph, name) | {name}
        for directory, _, files in os.walk(root):
            for f in files:
                if not f.endswith(".swift"):
                    continue
                checked += 1
                rel = os.path.relpath(os.path.join(directory, f), ROOT)
                for imported in IMPORT.findall(open(os.path.join(directory, f), encoding="utf-8").read()):
                    target = modules.get(imported)
                    if target is not None and target not in allowed:
                        wrong.append("%s imports %s, which %s does not depend on" % (rel, imported, name))
    assert checked > 200, "only %d Swift files read: is ROOT the repository?" % checked
    assert not wrong, "\n".join(wrong)


def test_the_architecture_page_and_package_header_name_every_application_target():
    doc = open(os.path.join(ROOT, "docs", "architecture.md")).read()
    layers = doc.split("## Layers", 1)[1].split("\n## ", 1)[0]
    header = open(os.path.join(ROOT, "Package.swift")).read().split("import PackageDescription", 1)[0]
    for name in LAYERS[LAYERS.index("TSSync"):LAYERS.index("TSApp") + 1]:
        assert re.search(r"\b%s\b" % name, layers), "docs/architecture.md \"Layers\" does not name %s" % name
        assert re.search(r"\b%s\b" % name, header), "Package.swift's header comment does not name %s" % name
