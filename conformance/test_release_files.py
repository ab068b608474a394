"""The release pieces an app's CI relies on, checked here where they cannot run (docs/release.md):
the release workflow builds every archive the formula and the action download, with the flags
scripts/release-linux uses; the action verifies SHA256SUMS before it runs anything; the formula has
a sum per archive that scripts/update-formula fills and refuses to leave stale."""
import os
import re
import subprocess
import tempfile

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML is not installed (pip install -r conformance/requirements.txt)")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def run_lines(job):
    return "\n".join(str(step.get("run", "")) for step in job["steps"])


def test_the_release_workflow_builds_every_archive_on_a_tag():
    wf = yaml.safe_load(read(".github", "workflows", "release.yml"))
    triggers = wf.get("on", wf.get(True))
    assert triggers["push"]["tags"] == ["v*"]
    jobs = wf["jobs"]
    assert set(jobs["linux"]["strategy"]["matrix"]["runner"]) == {"ubuntu-latest", "ubuntu-24.04-arm"}, "x86_64 and arm64"
    assert jobs["linux"]["container"]["image"].startswith("swift:6.2"), "the toolchain the package needs"
    assert "scripts/release-linux" in run_lines(jobs["linux"]), "the Linux job runs the script CI can run here"
    mac = run_lines(jobs["macos"])
    assert "--arch arm64 --arch x86_64" in mac and "lipo -info" in mac, "a universal binary, checked"
    assert "examples/socketio-client-swift" in mac, "the app's side runs on the Mac"
    publish = run_lines(jobs["publish"])
    assert "sha256sum -c SHA256SUMS" in publish and "gh release create" in publish
    assert "scripts/update-formula" in publish
    assert set(jobs["publish"]["needs"]) == {"linux", "macos"}


def test_the_script_builds_with_the_documented_flags():
    script = read("scripts", "release-linux")
    assert "swift build -c release --static-swift-stdlib --product touchsync --scratch-path .build-release" in script
    assert os.access(os.path.join(ROOT, "scripts", "release-linux"), os.X_OK)
    assert ".build-release" in read(".gitignore") or ".build-*/" in read(".gitignore"), "its scratch path is git-ignored"
    for lib in ("libsqlite3", "libpq", "libssl", "libcrypto", "libcurl"):
        assert lib in read("docs", "release.md"), f"docs/release.md names {lib}"


def test_the_action_checks_the_sum_before_it_runs_the_binary():
    action = yaml.safe_load(read("action.yml"))
    assert action["runs"]["using"] == "composite"
    script = action["runs"]["steps"][0]["run"]
    assert script.index("sha256sum -c") < script.index("tar -xzf"), "verify, then unpack"
    assert "serve --test-mode" in script and "/health" in script and "GITHUB_ENV" in script
    for asset in ("macos-universal", "linux-x86_64", "linux-aarch64"):
        assert asset in script


def test_the_formula_has_a_sum_per_archive_and_the_updater_fills_them():
    formula = read("Formula", "touchsync.rb")
    platforms = re.findall(r'sha256 "[0-9a-f]{64}" # (\S+)', formula)
    assert sorted(platforms) == ["linux-aarch64", "linux-x86_64", "macos-universal"]
    for p in platforms:
        assert f"touchsync-#{{version}}-{p}.tar.gz" in formula, f"the url of {p}"
    assert "test do" in formula and "--version" in formula
    with tempfile.TemporaryDirectory() as d:
        sums = os.path.join(d, "SHA256SUMS")
        with open(sums, "w") as f:
            for i, p in enumerate(platforms):
                f.write(f"{str(i) * 64}  touchsync-9.9.9-{p}.tar.gz\n")
        out = subprocess.run([os.path.join(ROOT, "scripts", "update-formula"), "9.9.9", sums], capture_output=True, text=True, check=True).stdout
        assert 'version "9.9.9"' in out
        assert sorted(re.findall(r'sha256 "([0-9a-f]{64})"', out)) == sorted(str(i) * 64 for i in range(3))
        with open(sums, "w") as f:
            f.write(f"{'0' * 64}  touchsync-9.9.9-linux-x86_64.tar.gz\n")
        stale = subprocess.run([os.path.join(ROOT, "scripts", "update-formula"), "9.9.9", sums], capture_output=True, text=True)
        assert stale.returncode != 0 and "is not in" in stale.stderr, "a missing archive is an error, never an old sum"


def test_the_example_is_not_part_of_the_root_package():
    assert "examples" not in read("Package.swift")
    assert "socket.io-client-swift" in read("examples", "socketio-client-swift", "Package.swift")


def test_the_example_the_mac_runs_is_a_product_of_its_package():
    # `swift run NAME` finds only an executable product; a target alone gets a product named after
    # the target, not after the package, so the name the workflow runs must be declared.
    wf = yaml.safe_load(read(".github", "workflows", "release.yml"))
    run = re.search(r"swift run --package-path examples/socketio-client-swift (\S+)", run_lines(wf["jobs"]["macos"]))
    assert run, "the macOS job runs the example"
    manifest = read("examples", "socketio-client-swift", "Package.swift")
    assert re.search(r'\.executable\(name: "%s"' % re.escape(run.group(1)), manifest), \
        f"examples/socketio-client-swift/Package.swift declares no executable product {run.group(1)!r}"
