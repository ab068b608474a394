"""Every shell command printed in README.md and docs/ runs as printed.

Each ```sh block (also bash, shell, console) carries a marker on the line before its fence, an HTML
comment GitHub does not render:
  <!-- runnable -->                        run here, in a scratch directory of its own
  <!-- runnable: with a server -->         the same, with a `touchsync serve` on a free port first
  <!-- runnable: in the repository -->     run at the repository's root (it builds a product)
  <!-- not runnable: REASON -->            listed as skipped, with REASON (root, macOS, Docker, …)
A block without a marker fails the test, so a new command cannot slip in untested.

The runnable blocks of one file run in order, sharing one scratch directory (its `config`, `docs` and
`Migrations` link to the repository's, so relative paths resolve as in a checkout) and one port:
  - `touchsync` is the built binary (TOUCHSYNC_BIN, else .build/debug), first on PATH;
  - `swift run touchsync` is replaced by `touchsync` (README, "Set up": the same program);
  - the documented port 3000 (`127.0.0.1:3000`, `localhost:3000`, `--port 3000`) becomes a free
    port, which a `serve` without `--port` gets from TOUCHSYNC_PORT;
  - a line that starts a server (`touchsync serve`, `conformance-server`) runs in the background
    until the file is done; the test waits until its port accepts connections;
  - the other lines run with `bash -e -o pipefail`, and must exit 0.
A ```swift block preceded by `<!-- file: PATH -->` must equal that file byte for byte (the file is
what a runnable block compiles and runs)."""
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import ROOT

# Never beside a `swift test` or another build-directory test (scripts/test runs the `buildtree` ones last, in one process): runs the documentation's
# commands in the repository (swift build/run rewrite .build/debug.yaml, which test_platform_checks.py reads).
pytestmark = pytest.mark.buildtree

BIN = os.environ.get("TOUCHSYNC_BIN") or os.path.join(ROOT, ".build", "debug", "touchsync")
MARKER = re.compile(r"^<!-- (runnable(?:: (with a server|in the repository))?|not runnable: (.+?)|file: (\S+)) -->$")
SHELL_FENCE = re.compile(r"^```(sh|bash|shell|console)\b")
SERVER_LINE = re.compile(r"^(touchsync serve\b|\S*conformance-server\b)")


def doc_files():
    files = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
    return [os.path.relpath(f, ROOT) for f in files]


def blocks(rel):
    """(line, fence info, marker match or None, body) of every fenced block of the file."""
    with open(os.path.join(ROOT, rel)) as f:
        lines = f.read().split("\n")
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```") and lines[i] != "```":
            start, info = i, lines[i][3:]
            marker = MARKER.match(lines[i - 1].strip()) if i > 0 else None
            j = i + 1
            while j < len(lines) and lines[j] != "```":
                j += 1
            out.append((start + 1, info, marker, "\n".join(lines[start + 1:j]) + "\n"))
            i = j + 1
        else:
            i += 1
    return out


def shell_blocks():
    return [(rel, line, marker, body) for rel in doc_files() for line, info, marker, body in blocks(rel) if SHELL_FENCE.match("```" + info)]


def commands(body):
    """The block's commands: continuation lines joined, blank and comment-only lines dropped."""
    out, current = [], ""
    for raw in body.split("\n"):
        current += raw
        if current.endswith("\\"):
            current = current[:-1] + " "
            continue
        if current.strip() and not current.strip().startswith("#"):
            out.append(current.strip())
        current = ""
    return out


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class DocRun:
    """One file's runnable blocks: a scratch directory, a port, the servers started."""

    def __init__(self, rel):
        self.rel = rel
        self.scratch = tempfile.mkdtemp(prefix="touchsync-docs-")
        for name in ("config", "docs", "Migrations"):
            os.symlink(os.path.join(ROOT, name), os.path.join(self.scratch, name))
        self.port = free_port()
        self.servers = []
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith("TOUCHSYNC_") or k in ("TOUCHSYNC_SERVER_POLLER", "TOUCHSYNC_SERVER_IO_URING")}
        self.env["PATH"] = os.path.dirname(os.path.abspath(BIN)) + os.pathsep + self.env.get("PATH", "")
        self.env["TOUCHSYNC_PORT"] = str(self.port)

    def substitute(self, command):
        command = re.sub(r"^swift run touchsync\b", "touchsync", command)
        command = re.sub(r"(127\.0\.0\.1|localhost):3000\b", rf"\g<1>:{self.port}", command)
        return re.sub(r"--port 3000\b", f"--port {self.port}", command)

    def start_server(self, command, cwd):
        self.stop_servers()  # the port is the file's one port
        log = open(os.path.join(self.scratch, f"server-{len(self.servers)}.log"), "w+")
        proc = subprocess.Popen(["bash", "-c", "exec " + command], cwd=cwd, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        self.servers.append((proc, log))
        deadline = time.time() + 120
        while time.time() < deadline:
            if proc.poll() is not None:
                log.seek(0)
                raise AssertionError(f"{self.rel}: `{command}` exited {proc.returncode}:\n{log.read()[-3000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise AssertionError(f"{self.rel}: `{command}` did not open port {self.port} within 120 s")

    def run(self, command, cwd):
        r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", command], cwd=cwd, env=self.env, capture_output=True,
                           text=True, timeout=900)
        assert r.returncode == 0, f"{self.rel}: `{command}` exited {r.returncode}\nstdout:\n{r.stdout[-3000:]}\nstderr:\n{r.stderr[-3000:]}"
        return r

    def close(self):
        self.stop_servers()
        shutil.rmtree(self.scratch, ignore_errors=True)

    def stop_servers(self):
        for proc, log in self.servers:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
            log.close()
        self.servers = []


def test_every_shell_block_is_marked_runnable_or_not_with_a_reason():
    found = shell_blocks()
    assert len(found) >= 20, found  # the scan sees the documentation at all
    unmarked = [f"{rel}:{line}" for rel, line, marker, _ in found if marker is None or marker.group(4)]
    assert not unmarked, ("shell blocks without <!-- runnable --> or <!-- not runnable: REASON --> on the line before "
                          f"the fence: {unmarked}")


def test_files_included_in_the_docs_equal_their_blocks():
    included = [(rel, line, marker.group(4), body) for rel in doc_files() for line, _, marker, body in blocks(rel)
                if marker and marker.group(4)]
    assert included, "docs/exec.md includes its XCTest example from docs/examples/"
    for rel, line, path, body in included:
        with open(os.path.join(ROOT, path)) as f:
            assert body == f.read(), f"{rel}:{line} differs from {path}: copy the file into the block"


RUNNABLE_FILES = sorted({rel for rel, _, marker, _ in shell_blocks() if marker and marker.group(1).startswith("runnable")})


@pytest.mark.parametrize("rel", RUNNABLE_FILES)
def test_runnable_commands_run_as_printed(rel):
    if not os.path.exists(BIN):
        pytest.skip(f"skipped: no touchsync binary at {BIN} (swift build --product touchsync)")
    doc = DocRun(rel)
    try:
        for rel_, line, marker, body in shell_blocks():
            if rel_ != rel or not marker.group(1).startswith("runnable"):
                continue
            cwd = ROOT if marker.group(2) == "in the repository" else doc.scratch
            if marker.group(2) == "with a server" and not doc.servers:
                doc.start_server(f"touchsync serve --port {doc.port} --database {os.path.join(doc.scratch, 'server.sqlite')}", doc.scratch)
            pending = []
            for command in map(doc.substitute, commands(body)):
                if SERVER_LINE.match(command):
                    if pending:
                        doc.run("\n".join(pending), cwd)
                        pending = []
                    doc.start_server(command, cwd)
                else:
                    pending.append(command)
            if pending:
                doc.run("\n".join(pending), cwd)
    finally:
        doc.close()


NOT_RUNNABLE = [(f"{rel}:{line}", marker.group(3)) for rel, line, marker, _ in shell_blocks() if marker and marker.group(3)]


@pytest.mark.parametrize("where,reason", NOT_RUNNABLE, ids=[w for w, _ in NOT_RUNNABLE])
def test_commands_that_cannot_run_here_are_listed(where, reason):
    pytest.skip(f"{where} not run: {reason}")
