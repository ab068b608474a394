"""The CI workflow (.github/workflows/ci.yml) runs what the README promises: the whole suite on
Linux with the Swift 6.2 toolchain image, and a build plus the Swift tests on macOS 15 with Xcode
26 (the toolchain the package's macOS 15 floor and dependencies need). Parsed with PyYAML, so a
broken file or a job that quietly stopped running a step fails here."""
import os
import re

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML is not installed (pip install -r conformance/requirements.txt)")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKFLOW = os.path.join(ROOT, ".github", "workflows", "ci.yml")


@pytest.fixture(scope="module")
def workflow():
    with open(WORKFLOW, encoding="utf-8") as f:
        return yaml.safe_load(f)


def commands(job):
    """Every shell line the job's steps run."""
    lines = []
    for step in job["steps"]:
        for line in str(step.get("run", "")).splitlines():
            line = line.strip()
            if line:
                lines.append(line)
    return lines


def test_runs_on_every_push_and_pull_request(workflow):
    # PyYAML reads the bare key `on` as the boolean True (YAML 1.1).
    triggers = workflow.get("on", workflow.get(True))
    assert "push" in triggers and "pull_request" in triggers


def test_linux_job_runs_the_whole_suite_in_the_swift_6_2_image(workflow):
    job = workflow["jobs"]["linux"]
    assert job["runs-on"].startswith("ubuntu")
    image = job["container"]["image"] if isinstance(job["container"], dict) else job["container"]
    assert re.fullmatch(r"swift:6\.2(\.\d+)?-(bookworm|jammy|noble)", image), image
    assert any(step.get("uses", "").startswith("actions/checkout@") for step in job["steps"])
    assert "./scripts/test" in commands(job)


def test_macos_job_builds_and_tests_with_xcode_26(workflow):
    job = workflow["jobs"]["macos"]
    assert job["runs-on"] == "macos-15"
    lines = commands(job)
    select = [l for l in lines if "xcode-select" in l]
    assert select and "Xcode_26" in select[0] and select[0].startswith("sudo xcode-select -s"), select
    build = [i for i, l in enumerate(lines) if l.startswith("swift build")]
    test = [i for i, l in enumerate(lines) if l.startswith("swift test")]
    assert build and test and build[0] < test[0], lines
    assert lines.index(select[0]) < build[0], "Xcode 26 must be selected before the build"


def test_every_job_has_a_time_limit(workflow):
    for name, job in workflow["jobs"].items():
        assert isinstance(job.get("timeout-minutes"), int), f"job {name} has no timeout-minutes"
