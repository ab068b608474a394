"""The two Linux stand-ins for a Mac compiler (docs/macos.md), checked on code written to trip them.

scripts/check-availability: a small Swift file type-checked with the real compiler, scanned for
APIs newer than a macOS 14 floor. It must report an unguarded `String(validating:as:)`, `Atomic`
and `TaskExecutor`, and must not report the same APIs under `if #available`, after `guard
#available`, inside `@available(macOS 15, *)`, nor the two cases the Mac compiler resolves to older
declarations (`&*` on an integer, the iterator call of `for await`).

scripts/check-darwin-typecheck: its stand-in Darwin module reproduces the rule that broke the
kqueue poller, and refuses what only glibc declares."""
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import textwrap

import pytest

# Never beside a `swift build` (scripts/test runs the `buildtree` ones last, in one process): reads .build/debug.yaml,
# which a `swift build --product …` (test_docs_commands.py) rewrites.
pytestmark = pytest.mark.buildtree

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

if not shutil.which("swiftc"):
    pytest.skip("swiftc is not on PATH: the platform checks need the Swift toolchain", allow_module_level=True)


def load(script):
    loader = importlib.machinery.SourceFileLoader(script.replace("-", "_"), os.path.join(ROOT, "scripts", script))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


SAMPLE = textwrap.dedent("""\
    import Synchronization

    func unguarded(_ b: [UInt8]) -> String? {
        String(validating: b, as: UTF8.self)
    }

    final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }

    func inIf(_ b: [UInt8]) -> String? {
        if #available(macOS 15, *) {
            return String(validating: b, as: UTF8.self)
        }
        return nil
    }

    func afterGuard(_ b: [UInt8]) -> String? {
        guard #available(macOS 15, *) else { return nil }
        return String(validating: b, as: UTF8.self)
    }

    @available(macOS 15, *)
    func inAvailable(_ e: any TaskExecutor) -> UnownedTaskExecutor { e.asUnownedTaskExecutor() }

    func olderOverloads(_ a: UInt64, _ s: AsyncStream<Int>) async -> UInt64 {
        for await x in s { _ = x }
        return a &* 3
    }

    func unguardedExecutor(_ e: any TaskExecutor) {}
    """)


@pytest.fixture(scope="module")
def availability(tmp_path_factory):
    check = load("check-availability")
    tc = check.toolchain()
    cache = os.path.join(ROOT, ".build", "availability")
    os.makedirs(cache, exist_ok=True)
    floor = (14, 0)
    newer = check.newer_declarations(check.extract_graphs(tc, cache), floor)
    return check, tc, newer, check.type_names(tc, newer), floor


def test_check_availability_reports_only_unguarded_uses(availability, tmp_path):
    check, tc, newer, names, floor = availability
    source = tmp_path / "Sample.swift"
    source.write_text(SAMPLE)
    findings, files = check.find_uses(tc, newer, names, floor,
                                      [("Sample", [tc["swiftc"], "-module-name", "Sample", "-parse-as-library", str(source)])],
                                      cwd=str(tmp_path))
    assert files == 1, findings
    lines = {(line, name) for _, line, _, name, _ in findings}
    assert (4, "Swift.String.init(validating:as:)") in lines
    assert (8, "Synchronization.Atomic") in lines
    assert (31, "_Concurrency.TaskExecutor") in lines
    reported = {line for line, _ in lines}
    # The guarded uses (lines 13, 20, 24), `&*` and `for await` (27, 28) are not reported.
    assert reported <= {4, 8, 31}, sorted(lines)


def test_check_availability_reads_a_dump_of_a_copy_and_names_the_original_lines(availability, tmp_path):
    """`--ast DIR`: a module scripts/check-darwin-typecheck dumped is read, not type-checked again
    (the command given here cannot run), and a finding in its copy (first line `#sourceLocation`)
    names the original file and line."""
    check, tc, newer, names, floor = availability
    original = tmp_path / "Sample.swift"
    original.write_text(SAMPLE)
    (tmp_path / "copy").mkdir()
    copy = tmp_path / "copy" / "Sample.swift"
    copy.write_text(f'#sourceLocation(file: "{original}", line: 1)\n' + SAMPLE)
    dumps = tmp_path / "ast"
    dumps.mkdir()
    with open(dumps / "Sample.json", "w") as out:
        r = subprocess.run([tc["swiftc"], "-typecheck", "-dump-ast", "-dump-ast-format", "json", "-module-name", "Sample",
                            "-parse-as-library", str(copy)], stdout=out, stderr=subprocess.PIPE, text=True, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    findings, files = check.find_uses(tc, newer, names, floor, [("Sample", [str(tmp_path / "no-such-swiftc")])],
                                      cwd=str(tmp_path), dumps=str(dumps))
    assert files == 1, findings
    assert {(os.path.normpath(os.path.join(ROOT, rel)), line) for rel, line, _, _, _ in findings} == {(str(original), 4), (str(original), 8),
                                                                                 (str(original), 31)}, findings


def test_check_availability_reads_the_floor_of_this_package():
    check = load("check-availability")
    assert check.read_floor() == (15, 0)


def run_swiftc(tmp_path, source, module_dir):
    (tmp_path / "use.swift").write_text(source)
    return subprocess.run(["swiftc", "-typecheck", "-I", str(module_dir), "-I", os.path.join(ROOT, "scripts", "darwin-standin"),
                           "-module-cache-path", str(tmp_path / "mc"), str(tmp_path / "use.swift")],
                          capture_output=True, text=True)


@pytest.fixture(scope="module")
def darwin_standin(tmp_path_factory):
    out = tmp_path_factory.mktemp("darwin")
    standin = os.path.join(ROOT, "scripts", "darwin-standin")
    r = subprocess.run(["swiftc", "-emit-module", "-module-name", "Darwin", "-parse-as-library",
                        "-emit-module-path", str(out / "Darwin.swiftmodule"), "-I", standin,
                        "-module-cache-path", str(out / "mc"), os.path.join(standin, "Darwin.swift")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def test_standin_refuses_a_module_qualified_kevent_call(darwin_standin, tmp_path):
    bad = run_swiftc(tmp_path, "import Darwin\nfunc f(_ kq: Int32) { _ = Darwin.kevent(kq, nil, 0, nil, 0, nil) }\n", darwin_standin)
    assert bad.returncode != 0 and "missing argument labels 'ident:filter:flags:fflags:data:udata:'" in bad.stderr, bad.stderr
    good = run_swiftc(tmp_path, textwrap.dedent("""\
        import Darwin
        private let sysKevent: @convention(c) (Int32, UnsafePointer<kevent>?, Int32, UnsafeMutablePointer<kevent>?, Int32,
                                               UnsafePointer<timespec>?) -> Int32 = kevent
        func f(_ kq: Int32) { var e = kevent(); e.filter = Int16(EVFILT_USER); _ = sysKevent(kq, &e, 1, nil, 0, nil) }
        """), darwin_standin)
    assert good.returncode == 0, good.stderr


def test_standin_has_darwin_shapes_not_glibc_ones(darwin_standin, tmp_path):
    darwin = run_swiftc(tmp_path, textwrap.dedent("""\
        import Darwin
        func f() {
            var a = sockaddr_in(); a.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
            _ = socket(AF_INET, SOCK_STREAM, 0)
            _ = pthread_setname_np("loop")
            var tid: pthread_t? = nil
            _ = pthread_create(&tid, nil, { arg in _ = (arg as UnsafeMutableRawPointer?)!; return nil }, nil)
        }
        """), darwin_standin)
    assert darwin.returncode == 0, darwin.stderr
    for glibc_only in ["_ = accept4(0, nil, nil, 0)", "_ = Glibc.errno", "_ = pthread_setname_np(pthread_self(), \"x\")",
                       "_ = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)"]:
        r = run_swiftc(tmp_path, f"import Darwin\nfunc f() {{ {glibc_only} }}\n", darwin_standin)
        assert r.returncode != 0, f"the stand-in accepted glibc's `{glibc_only}`"
