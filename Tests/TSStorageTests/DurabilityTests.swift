import Foundation
import XCTest
@testable import TSStorage

/// A write that was answered survives `kill -9` (a client that got 2xx may rely on it). The test re-runs this test
/// binary as a child process that writes rows with `Database.write` from several tasks and
/// prints `ack <n>` after each write returns; the parent SIGKILLs it mid-stream, reopens the
/// database and checks that every acknowledged row is there.
final class DurabilityTests: XCTestCase {
    static let childEnvironmentKey = "TSSTORAGE_KILL9_CHILD_DB"

    func testAcknowledgedWritesSurviveKill9() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir + "/kill9.sqlite"
        let process = try childTestProcess("TSStorageTests.DurabilityTests/testKill9ChildWriter",
                                           environment: Self.childEnvironmentKey, path, what: "kill -9 durability")
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()

        var acked = Set<Int>()
        var buffer = ""
        let deadline = Date().addingTimeInterval(60)
        let reader = pipe.fileHandleForReading
        while acked.count < 300 && Date() < deadline {
            let data = reader.availableData
            if data.isEmpty { break }  // child exited
            buffer += String(decoding: data, as: UTF8.self)
            while let newline = buffer.firstIndex(of: "\n") {
                let line = buffer[..<newline]
                buffer = String(buffer[buffer.index(after: newline)...])
                if line.hasPrefix("ack "), let n = Int(line.dropFirst(4)) { acked.insert(n) }
            }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .uncaughtSignal, "the child must have been killed, not exited")
        XCTAssertGreaterThanOrEqual(acked.count, 300, "child did not acknowledge enough writes")

        let db = try Database(path: path)
        defer { db.close() }
        let stored = Set(try db.readSync { try $0.rows("SELECT n FROM acked") { Int($0.int(0)) } })
        let lost = acked.subtracting(stored)
        XCTAssertTrue(lost.isEmpty, "acknowledged writes lost after kill -9: \(lost.sorted().prefix(10))")
        XCTAssertEqual(try db.readSync { try $0.scalarString("PRAGMA integrity_check") }, "ok")
    }

    /// The child side of `testAcknowledgedWritesSurviveKill9`; skipped unless run by it.
    func testKill9ChildWriter() async throws {
        guard let path = ProcessInfo.processInfo.environment[Self.childEnvironmentKey] else {
            throw XCTSkip("runs only as the child process of testAcknowledgedWritesSurviveKill9")
        }
        // Small WAL bounds: background checkpoints and the writer's restarts of the WAL happen
        // many times while the parent counts acknowledgements, so the kill can land in either.
        var config = DatabaseConfiguration(synchronous: .full)
        config.walAutocheckpointPages = 8
        config.walMaxBytes = 64 << 10
        let db = try Database(path: path, configuration: config)
        try db.writeSync { try $0.executeScript("CREATE TABLE IF NOT EXISTS acked (n INTEGER PRIMARY KEY, payload BLOB)") }
        let out = FileHandle.standardOutput
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var i = 0
                    while i < 100_000 {  // runs until killed
                        let n = worker * 1_000_000 + i
                        try await db.write { try $0.run("INSERT INTO acked VALUES (?, randomblob(200))", [.int(Int64(n))]) }
                        out.write(Data("ack \(n)\n".utf8))
                        i += 1
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
