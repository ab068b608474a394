import Foundation
import XCTest

/// A real `touchsync serve` child process on an in-memory database and a free port, as an app's
/// CI would run it (the kit cannot use an in-process server: it must not depend on the server).
/// The binary is `TOUCHSYNC_BIN`, else the `touchsync` SwiftPM built beside this test bundle;
/// without either, tests skip visibly.
final class TouchSyncServerProcess: @unchecked Sendable {
    // @unchecked: every property is set once in init; Process and Pipe are only touched by stop().
    let process: Process
    let url: URL
    private let output: Pipe

    static var executablePath: String? {
        if let p = ProcessInfo.processInfo.environment["TOUCHSYNC_BIN"], !p.isEmpty { return p }
        var candidates: [URL] = []
        if let arg0 = CommandLine.arguments.first { candidates.append(URL(fileURLWithPath: arg0).deletingLastPathComponent()) }
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") { candidates.append(bundle.bundleURL.deletingLastPathComponent()) }
        for dir in candidates {
            var d = dir
            for _ in 0..<4 {
                let p = d.appendingPathComponent("touchsync").path
                var isDir: ObjCBool = false
                if FileManager.default.fileExists(atPath: p, isDirectory: &isDir), !isDir.boolValue,
                   FileManager.default.isExecutableFile(atPath: p) { return p }
                d = d.deletingLastPathComponent()
            }
        }
        return nil
    }

    /// Starts `touchsync serve --port 0 --database :memory:` plus `arguments`, and waits (at most
    /// 60 s) for its `TouchSync … listening on http://127.0.0.1:PORT` line.
    init(arguments: [String] = ["--test-mode"], environment extra: [String: String] = [:]) throws {
        guard let path = Self.executablePath else {
            throw XCTSkip("touchsync executable not found next to the test bundle: run `swift build` first, or set TOUCHSYNC_BIN")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = ["serve", "--port", "0", "--database", ":memory:", "--no-inspector"] + arguments
        var env = ProcessInfo.processInfo.environment
        env["TOUCHSYNC_AUTH_PASSWORD_ITERATIONS"] = "1000"  // fixtures hash passwords: keep loads fast
        env["TOUCHSYNC_LOG_LEVEL"] = "warning"
        env["TOUCHSYNC_JWT_SECRET"] = "touchsync-testing-secret-0123456789"
        for key in ["TOUCHSYNC_TEST_MODE", "TOUCHSYNC_URL", "TOUCHSYNC_PORT", "TOUCHSYNC_DATABASE_URL", "TOUCHSYNC_TEST_MODE_TOKEN"] { env.removeValue(forKey: key) }
        env.merge(extra) { _, new in new }
        p.environment = env
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        process = p
        output = out
        // The output is read on the pipe's handler thread into `banner`; this thread waits on a
        // semaphore with a deadline, so a server that never prints cannot hang the test run.
        let banner = Banner()
        out.fileHandleForReading.readabilityHandler = { h in banner.append(h.availableData) }
        let deadline = DispatchTime.now() + .seconds(60)
        var found: URL?
        while found == nil {
            found = banner.url
            if found != nil || !p.isRunning && banner.ended { break }
            if banner.signal.wait(timeout: deadline) == .timedOut { found = banner.url; break }
        }
        guard let found else {
            p.terminate()
            throw ServerError(description: "touchsync serve did not print its address within 60 s; output:\n\(banner.text)")
        }
        url = found
    }

    /// What the server printed so far, and the address once its `listening on` line is there.
    final class Banner: @unchecked Sendable {
        // @unchecked: every field is read and written under `lock`.
        private let lock = NSLock()
        private var bytes = Data()
        private var eof = false
        let signal = DispatchSemaphore(value: 0)

        func append(_ data: Data) {
            lock.lock()
            if data.isEmpty { eof = true } else if bytes.count < 1 << 16 { bytes.append(data) }
            lock.unlock()
            signal.signal()
        }

        var ended: Bool { lock.lock(); defer { lock.unlock() }; return eof }
        var text: String { lock.lock(); defer { lock.unlock() }; return String(decoding: bytes, as: UTF8.self) }

        var url: URL? {
            for line in text.split(separator: "\n") where line.contains("TouchSync") {
                guard let r = line.range(of: "listening on http://") else { continue }
                return URL(string: "http://" + line[r.upperBound...].prefix { !$0.isWhitespace })
            }
            return nil
        }
    }

    struct ServerError: Error, CustomStringConvertible { let description: String }

    /// SIGTERM, then SIGKILL if the server has not exited within 10 s: `serve` installs its
    /// SIGTERM handler only after printing its address, so a SIGTERM sent in that window is
    /// ignored and would leave the process (and a `waitUntilExit`) hanging.
    func stop() {
        output.fileHandleForReading.readabilityHandler = nil
        guard process.isRunning else { return }
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        guard process.isRunning else { return }
        process.terminate()
        if exited.wait(timeout: .now() + .seconds(10)) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            _ = exited.wait(timeout: .now() + .seconds(10))
        }
    }

    deinit { stop() }
}
