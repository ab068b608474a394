"""Everything a reader of this repository is pointed at can be opened here: code, comments, tests,
scripts and docs explain the reason itself, or link a file of the repository (docs/api.md,
docs/decisions.md, an RFC), never a document or tracker item that lives elsewhere. A reference
such as "see the contract §2", "seed 003" or "issue 14 item 1" tells the next reader nothing, and
goes stale the day the tracker moves. Needs no server: it reads the working tree."""
import os
import re
import subprocess

import pytest

from conftest import ROOT

# The places a reader looks (the same list the docs and the review use).
SCOPE = ("Sources/", "Tests/", "docs/", "scripts/", "conformance/", "bench/", "fuzz/", "config/", "Migrations/",
         "deploy/", ".ci/", "README.md", "Dockerfile", "docker-compose.yml", "Package.swift")

# An outside contract document, the integration guides by number, tracker items and work periods.
PATTERN = re.compile(r"CONTRACT\.md|\bCONTRACT\b|[Ss]eeds? ?0?0[0-9]|[Ii]ssue [0-9]|[Ii]ssues? #?[0-9]|[Ss]ession [0-9]")

SKIPPED = {
    # This file spells the patterns out.
    "conformance/test_repo_references.py",
}


def files_in_scope():
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout, so the file list is unknown: " + listed.stderr.strip())
    for rel in sorted(set(listed.stdout.splitlines())):
        if rel in SKIPPED or not rel.startswith(SCOPE):
            continue
        path = os.path.join(ROOT, rel)
        if os.path.isfile(path):
            yield rel, path


def test_no_reference_to_anything_outside_the_repository():
    offenders = []
    checked = 0
    for rel, path in files_in_scope():
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except UnicodeDecodeError:
            continue  # binary (fuzz corpora, images): no prose to read
        checked += 1
        for n, line in enumerate(text.splitlines(), 1):
            if PATTERN.search(line):
                offenders.append(f"{rel}:{n}: {line.strip()[:160]}")
    assert checked > 100, f"only {checked} files were read: is ROOT ({ROOT}) the repository?"
    assert not offenders, ("say the reason itself, or link a file of the repository (docs/api.md, "
                           "docs/decisions.md), instead of:\n" + "\n".join(offenders))


def test_the_pattern_finds_each_kind_of_reference():
    """The check above is only as good as its pattern: each kind it must catch, and prose it must not."""
    for hit in ["see CONTRACT.md §2", "(seed 002)", "seeds 000/001", "Issue 14 item 3:", "issue 9, item 1",
                "(issues 12 and 14)", "issue #7", "Session 4 end"]:
        assert PATTERN.search(hit), hit
    for prose in ["the session's lock", "issued tokens", "a seeded server", "the contract's dates",
                  "https://github.com/miguelgrinberg/python-engineio/issues/461", "random seed 7"]:
        assert not PATTERN.search(prose), prose
