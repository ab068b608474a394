import Foundation
import XCTest

/// The real `conformance-server` executable (built with the package), started on port 0 for
/// tests that exercise exactly what the official protocol suites run against. Tests that need it
/// skip visibly when the binary is not there (e.g. a test-only build).
final class ConformanceServerProcess {
    let process: Process
    let port: Int

    /// Where SwiftPM put the executable: beside the test bundle, or `CONFORMANCE_SERVER`.
    static var executablePath: String? {
        if let p = ProcessInfo.processInfo.environment["CONFORMANCE_SERVER"] { return p }
        var candidates: [URL] = []
        if let arg0 = CommandLine.arguments.first {
            candidates.append(URL(fileURLWithPath: arg0).deletingLastPathComponent())
        }
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        candidates.append(Bundle.main.bundleURL)
        for dir in candidates {
            var d = dir
            for _ in 0..<4 {
                let p = d.appendingPathComponent("conformance-server").path
                if FileManager.default.isExecutableFile(atPath: p) { return p }
                d = d.deletingLastPathComponent()
            }
        }
        return nil
    }

    /// Starts the server with the suites' timings (pingInterval 300 ms, pingTimeout 200 ms,
    /// unless told otherwise) and waits for its `listening on` line.
    init(extraArguments: [String] = []) throws {
        guard let path = Self.executablePath else {
            throw XCTSkip("conformance-server executable not found next to the test bundle (run `swift build` first, or set CONFORMANCE_SERVER)")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        // Quiet: stdout is a pipe nobody drains after the first line.
        p.arguments = ["--port", "0", "--log-level", "critical"] + extraArguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        process = p
        // The first line is `listening on http://127.0.0.1:PORT (poller NAME)`.
        var line: [UInt8] = []
        let handle = out.fileHandleForReading
        while true {
            let chunk = handle.readData(ofLength: 1)
            guard let byte = chunk.first else { break }
            if byte == 10 { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        let url = text.split(separator: " ").first { $0.hasPrefix("http://") } ?? ""
        guard let colon = url.lastIndex(of: ":"), let port = Int(url[url.index(after: colon)...]) else {
            p.terminate()
            // The binary is there but did not start: a failure, not a skip.
            throw ServerError(description: "conformance-server did not print its port (got \(text))")
        }
        self.port = port
    }

    struct ServerError: Error, CustomStringConvertible { let description: String }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    deinit { stop() }
}
