import Foundation
import XCTest

/// The platform layer is the only code that may name an OS-specific API: a Linux-only
/// call elsewhere in Sources/, Tests/ or bench/ would break the macOS build, which cannot be
/// compiled here, so this test greps for them.
final class PlatformLayerTests: XCTestCase {
    /// Files allowed to use OS-specific APIs, relative to the package root.
    static let platformLayer: [String] = [
        "Sources/CSystem/",
        "Sources/TSSockets/Platform+Glibc.swift",
        "Sources/TSSockets/Platform+Darwin.swift",
        "Sources/TSSockets/Poller+Epoll.swift",
        "Sources/TSSockets/Poller+KQueue.swift",
        "Sources/TSSync/Platform+LibC.swift",
        // The tests' raw clients have their own (independent of TSSockets) platform file.
        "Tests/TSTestSupport/TestSockets.swift",
        // Standalone Linux-only C experiments (io_uring vs send(2)): built by hand with cc,
        // never by SwiftPM, so they cannot break the macOS build.
        "bench/experiments/",
        // This file names the patterns.
        "Tests/TSSocketsTests/PlatformLayerTests.swift",
    ]

    /// Linux-only (or Darwin-only) names, and per-platform conditionals.
    static let forbidden: [(name: String, pattern: String)] = [
        ("import Glibc", #"import\s+Glibc"#),
        ("import Darwin", #"import\s+Darwin"#),
        ("Glibc.", #"\bGlibc\."#),
        ("Darwin.", #"\bDarwin\."#),
        ("#if os(...)", #"#(if|elseif)\s+os\("#),
        ("canImport(Glibc/Darwin)", #"canImport\((Glibc|Darwin|Musl)\)"#),
        ("epoll_*", #"\bepoll_[a-z]"#),
        ("EPOLL*", #"\bEPOLL[A-Z_]"#),
        ("eventfd", #"\beventfd\b"#),
        ("accept4", #"\baccept4\b"#),
        ("sched_*affinity", #"\bsched_[gs]etaffinity\b"#),
        ("SOCK_NONBLOCK/SOCK_CLOEXEC", #"\bSOCK_(NONBLOCK|CLOEXEC)\b"#),
        ("SOCK_STREAM.rawValue (glibc's enum typing)", #"\bSOCK_(STREAM|DGRAM)\.rawValue"#),
        ("MSG_NOSIGNAL", #"\bMSG_NOSIGNAL\b"#),
        ("SO_NOSIGPIPE", #"\bSO_NOSIGPIPE\b"#),
        ("kqueue/kevent", #"\b(kqueue|kevent)\("#),
        ("dlsym", #"\bdlsym\b"#),
        ("pthread_create", #"\bpthread_create\("#),
        // io_uring exists only on Linux (CSystem's ts_uring_* are declared there only).
        ("io_uring / ts_uring_*", #"\b(io_uring_[a-z_]+|ts_uring_[a-z_]+)\("#),
    ]

    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    func testNoOSSpecificAPIOutsideThePlatformLayer() throws {
        let fm = FileManager.default
        var scanned = 0
        var violations: [String] = []
        let regexes = try Self.forbidden.map { ($0.name, try NSRegularExpression(pattern: $0.pattern)) }
        for top in ["Sources", "Tests", "bench"] {
            guard let walker = fm.enumerator(at: Self.root.appendingPathComponent(top), includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in walker {
                // Build output and fetched packages (a bench peer's `.build/checkouts`) are not ours.
                if url.lastPathComponent.hasPrefix(".build") { walker.skipDescendants(); continue }
                guard ["swift", "c", "h"].contains(url.pathExtension) else { continue }
                let rel = String(url.path.dropFirst(Self.root.path.count + 1))
                if Self.platformLayer.contains(where: { rel.hasPrefix($0) }) { continue }
                let text = try String(contentsOf: url, encoding: .utf8)
                scanned += 1
                violations += Self.violations(in: text, file: rel, regexes: regexes)
            }
        }
        XCTAssertGreaterThan(scanned, 100, "the scan found the sources (root \(Self.root.path))")
        XCTAssertTrue(violations.isEmpty, "OS-specific APIs outside the platform layer (move them into Sources/TSSockets/Platform+*.swift):\n"
                      + violations.joined(separator: "\n"))
    }

    /// Each pattern runs once over the file's code (every line cut at its `//`), not once per line:
    /// NSRegularExpression on Linux bridges its input to UTF-16 on every call, which per line cost
    /// seconds for the whole tree. A match across a line break is not one (as when lines were
    /// matched one by one).
    static func violations(in text: String, file: String, regexes: [(String, NSRegularExpression)]) -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let code = lines.map { String($0.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? "") }
        // The UTF-16 offset where each line of `joined` starts, for a match's line number.
        var starts: [Int] = []
        var offset = 0
        for line in code {
            starts.append(offset)
            offset += line.utf16.count + 1
        }
        let joined = code.joined(separator: "\n") as NSString
        var found: [(line: Int, name: String)] = []
        for (name, re) in regexes {
            // Matches come in order of position, so the line only moves forward.
            var line = 0, lastLine = -1
            for m in re.matches(in: joined as String, range: NSRange(location: 0, length: joined.length)) {
                guard joined.substring(with: m.range).contains("\n") == false else { continue }
                while line + 1 < starts.count && starts[line + 1] <= m.range.location { line += 1 }
                if line != lastLine { found.append((line, name)); lastLine = line }
            }
        }
        return found.sorted { $0.line < $1.line }.map {
            "\(file):\($0.line + 1): \($0.name): \(lines[$0.line].trimmingCharacters(in: .whitespaces))"
        }
    }

    func testTheScanFindsEachViolationOnItsLineAndIgnoresComments() throws {
        let regexes = try Self.forbidden.map { ($0.name, try NSRegularExpression(pattern: $0.pattern)) }
        let text = "let a = 1\n// accept4(x) in a comment\nlet fd = accept4(l, nil, nil, 0) // epoll_wait\nimport\nGlibc\n  import Darwin"
        XCTAssertEqual(Self.violations(in: text, file: "F.swift", regexes: regexes),
                       ["F.swift:3: accept4: let fd = accept4(l, nil, nil, 0) // epoll_wait", "F.swift:6: import Darwin: import Darwin"])
    }

    func testTheScanCatchesAViolation() throws {
        let re = try NSRegularExpression(pattern: Self.forbidden.first { $0.name == "accept4" }!.pattern)
        let line = "let fd = accept4(listener, nil, nil, 0)"
        XCTAssertNotNil(re.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)))
    }
}
