"""docs/api.md's list of error codes (Conventions, "Envelopes") against the error types the server
answers with, in both directions: every (code, status) a source file can produce is documented,
and every documented one is produced somewhere. Read from the sources as
test_realtime.py::test_docs_realtime_md_documents_every_event_the_server_knows reads event names, so
a new error code, a renamed one or a changed status fails here until the reference says so."""
import glob
import os
import re

from conftest import ROOT


def read(*parts):
    with open(os.path.join(ROOT, *parts)) as f:
        return f.read()


def default_codes():
    """HTTPStatus.errorCode: the code an HTTPError built from a bare status gets."""
    src = read("Sources", "TSHTTP", "HTTPStatus.swift")
    body = src[src.index("func errorCode"):]
    return {int(s): c for s, c in re.findall(r'case (\d{3}): return "([A-Z_]+)"', body)}


def produced_by_sources():
    pairs = {}  # (code, status) -> where

    def add(code, status, where):
        pairs.setdefault((code, int(status)), where)

    # Explicit pairs: HTTPError(status: N, code: "X"), APIError(status: N, code: "X") and
    # ErrorReply(status: N, code: "X") in the HTTP layer, the shared error mapping and the routes
    # (REST, test mode, inspector).
    route_targets = ("TSContract", "TSRoutes", "TSTestMode", "TSInspector")
    for path in glob.glob(os.path.join(ROOT, "Sources", "TSHTTP", "*.swift")) + \
            [p for t in route_targets for p in glob.glob(os.path.join(ROOT, "Sources", t, "**", "*.swift"), recursive=True)]:
        for status, code in re.findall(r'status: (\d{3}), code: "([A-Z_]+)"', read(path)):
            add(code, status, os.path.relpath(path, ROOT))

    # Errors from a bare status (the parser's HTTPParseError, HTTPError(status:message:)) take the
    # default code of that status.
    defaults = default_codes()
    for path in glob.glob(os.path.join(ROOT, "Sources", "TSHTTP", "*.swift")):
        src = read(path)
        statuses = re.findall(r'HTTPParseError\(status: (\d{3})', src) + re.findall(r'HTTPError\(status: (\d{3}), message:', src)
        if "static func bad(" in src:
            statuses += re.findall(r'static func bad\([^)]*\) -> HTTPParseError \{ HTTPParseError\(status: (\d{3})', src)
        for status in statuses:
            if status == "500" and "already started" in src:  # a programming error of start(), never an answer
                continue
            add(defaults[int(status)], status, os.path.relpath(path, ROOT))

    # The domain's errors: each case's status and code.
    src = read("Sources", "TSDomain", "Support", "DomainError.swift")
    status_of = dict(re.findall(r'case \.(\w+): return (\d{3})', src))
    code_of = dict(re.findall(r'case \.(\w+): return "([A-Z_]+)"', src))
    assert status_of and status_of.keys() == code_of.keys(), (status_of, code_of)
    for case, status in status_of.items():
        add(code_of[case], status, "Sources/TSDomain/Support/DomainError.swift")
    return pairs


def documented():
    doc = read("docs", "api.md")
    section = doc[doc.index("**Envelopes.**"):doc.index("**Input.**")]
    return {(code, int(status)) for code, status in re.findall(r"`([A-Z_]+)` \((\d{3})", section)}


def test_every_error_code_the_server_answers_with_is_in_docs_api_md():
    produced = produced_by_sources()
    assert len(produced) >= 15, produced  # the scan found the error types at all
    missing = {p: where for p, where in produced.items() if p not in documented()}
    assert not missing, f"error codes missing from docs/api.md's Conventions (code, status): where produced: {missing}"


def test_every_error_code_in_docs_api_md_is_one_the_server_answers_with():
    docs = documented()
    assert len(docs) >= 15, docs
    stale = sorted(docs - set(produced_by_sources()))
    assert not stale, f"docs/api.md documents (code, status) pairs no source produces: {stale}"
