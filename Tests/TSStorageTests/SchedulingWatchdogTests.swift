import Foundation
import Synchronization
import XCTest
@testable import TSStorage
import TSStorageTestSupport

/// The debug-build scheduling check (SQLConnection+Watchdog.swift): a connection `Database` owns
/// runs statements only inside the job that holds it. A real misuse traps (`preconditionFailure`),
/// which XCTest cannot catch in process: one test re-runs this test binary as a child that
/// misuses a connection and checks that it died of the trap with the check's message; the others
/// route the report to a handler (`ConnectionWatchdog.misuseHandler`) and check that the
/// statement's own check reported it.
final class SchedulingWatchdogTests: XCTestCase {
    #if DEBUG
    static let childEnvironmentKey = "TSSTORAGE_WATCHDOG_CHILD_DB"

    func testAMisusedConnectionTrapsTheProcess() throws {
        let dir = try makeTemporaryDirectory(self)
        let process = try childTestProcess("TSStorageTests.SchedulingWatchdogTests/testMisuseChild",
                                           environment: Self.childEnvironmentKey, dir + "/watchdog.sqlite", what: "watchdog trap")
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .uncaughtSignal, "the child must die of the trap, not exit: \(stderr.suffix(2000))")
        XCTAssertTrue(stderr.contains("SQLConnection misuse: a statement ran on a database connection outside the job that holds it: SELECT 42"),
                      "the trap names the misuse and the statement: \(stderr.suffix(2000))")
    }

    /// The child side of `testAMisusedConnectionTrapsTheProcess`; skipped unless run by it.
    func testMisuseChild() async throws {
        guard let path = ProcessInfo.processInfo.environment[Self.childEnvironmentKey] else {
            throw XCTSkip("runs only as the child process of testAMisusedConnectionTrapsTheProcess")
        }
        let db = try Database(path: path)
        let escaped = Escaped()
        _ = try await db.read { c in escaped.connection = c }
        _ = try escaped.connection?.scalarInt("SELECT 42")  // traps here
        XCTFail("the misuse did not trap")
    }

    /// The misuse reports seen while `body` runs (the handler is restored afterwards).
    private func misuseReports(_ body: () throws -> Void) rethrows -> [String] {
        let box = Reports()
        ConnectionWatchdog.misuseHandler.withLock { $0 = { message in box.append(message) } }
        defer { ConnectionWatchdog.misuseHandler.withLock { $0 = nil } }
        try body()
        return box.all
    }

    private final class Reports: Sendable {
        private let list = Mutex<[String]>([])
        func append(_ s: String) { list.withLock { $0.append(s) } }
        var all: [String] { list.withLock { $0 } }
    }

    /// Moves a connection out of the job that was given it: the misuse under test.
    private final class Escaped: @unchecked Sendable {
        // Written inside one job, read after it returned (the `await` orders the two).
        var connection: SQLConnection?
        var allowedInside = false
    }

    func testAReadConnectionKeptPastItsReadIsCaught() async throws { try await aReadConnectionKeptPastItsReadIsCaught(.sqlite) }
    func testAReadConnectionKeptPastItsReadIsCaughtPostgres() async throws { try await aReadConnectionKeptPastItsReadIsCaught(.postgres) }

    private func aReadConnectionKeptPastItsReadIsCaught(_ backend: StorageBackend) async throws {
        let (db, _) = try openTestDatabase(self, backend)
        let escaped = Escaped()
        let one = try await db.read { c in
            escaped.connection = c
            escaped.allowedInside = c.isAllowedHere
            return try c.scalarInt("SELECT 1")
        }
        XCTAssertEqual(one, 1)
        XCTAssertTrue(escaped.allowedInside, "the read's own thread holds its connection")
        let connection = try XCTUnwrap(escaped.connection)
        XCTAssertFalse(connection.isAllowedHere, "after the read returned, the test's thread does not hold the reader's connection")
        let reports = try misuseReports { _ = try connection.scalarInt("SELECT 2") }
        XCTAssertEqual(reports.count, 1, "\(reports)")
        XCTAssertTrue(reports.first?.contains("outside the job that holds it: SELECT 2") == true, "\(reports)")
    }

    func testTheWriterConnectionUsedInsideAReadIsCaught() async throws { try await theWriterConnectionUsedInsideAReadIsCaught(.sqlite) }
    func testTheWriterConnectionUsedInsideAReadIsCaughtPostgres() async throws { try await theWriterConnectionUsedInsideAReadIsCaught(.postgres) }

    /// A job that uses another job's connection: the writer's, from a reader thread (each thread
    /// holds only its own connection).
    private func theWriterConnectionUsedInsideAReadIsCaught(_ backend: StorageBackend) async throws {
        let (db, _) = try openTestDatabase(self, backend)
        let escaped = Escaped()
        try await db.write { c in escaped.connection = c }
        XCTAssertNotNil(escaped.connection)
        let handlerReports = Reports()
        ConnectionWatchdog.misuseHandler.withLock { $0 = { handlerReports.append($0) } }
        defer { ConnectionWatchdog.misuseHandler.withLock { $0 = nil } }
        let heldByReader = Escaped()
        try await db.read { c in
            guard let writer = escaped.connection else { return }
            heldByReader.allowedInside = c.isAllowedHere && !writer.isAllowedHere
            _ = try writer.scalarInt("SELECT 3")
        }
        XCTAssertTrue(heldByReader.allowedInside, "the reader thread holds its own connection and not the writer's")
        XCTAssertEqual(handlerReports.all.count, 1, "\(handlerReports.all)")
        XCTAssertTrue(handlerReports.all.first?.contains("SELECT 3") == true, "\(handlerReports.all)")
    }

    func testEveryKindOfJobPassesTheCheck() async throws { try await everyKindOfJobPassesTheCheck(.sqlite) }
    func testEveryKindOfJobPassesTheCheckPostgres() async throws { try await everyKindOfJobPassesTheCheck(.postgres) }

    /// The jobs themselves never trip it: write (group commit), maintenance, writeSync,
    /// withWriterConnection, read, readSync (blocking, on a reader thread).
    private func everyKindOfJobPassesTheCheck(_ backend: StorageBackend) async throws {
        let (db, _) = try openTestDatabase(self, backend)
        let handlerReports = Reports()
        ConnectionWatchdog.misuseHandler.withLock { $0 = { handlerReports.append($0) } }
        defer { ConnectionWatchdog.misuseHandler.withLock { $0 = nil } }
        try db.writeSync { c in try c.executeScript("CREATE TABLE t (v INTEGER)") }
        try await db.write { c in try c.run("INSERT INTO t (v) VALUES (?)", [.int(1)]) }
        try await db.maintenance { c in try c.run("INSERT INTO t (v) VALUES (?)", [.int(2)]) }
        try db.withWriterConnection { c in _ = try c.scalarInt("SELECT count(*) FROM t") }
        let viaRead = try await db.read { c in try c.scalarInt("SELECT count(*) FROM t") }
        let viaReadSync = try db.readSync { c in try c.scalarInt("SELECT count(*) FROM t") }
        XCTAssertEqual(viaRead, 2)
        XCTAssertEqual(viaReadSync, 2)
        XCTAssertEqual(handlerReports.all, [])
    }

    func testAMemoryDatabaseReadHoldsTheWriterConnection() async throws {
        let db = try Database(path: ":memory:")
        defer { db.close() }
        let handlerReports = Reports()
        ConnectionWatchdog.misuseHandler.withLock { $0 = { handlerReports.append($0) } }
        defer { ConnectionWatchdog.misuseHandler.withLock { $0 = nil } }
        let escaped = Escaped()
        let one = try await db.read { c in
            escaped.connection = c
            return try c.scalarInt("SELECT 1")
        }
        XCTAssertEqual(one, 1)
        XCTAssertEqual(handlerReports.all, [], "reads routed through the writer hold it")
        XCTAssertFalse(try XCTUnwrap(escaped.connection).isAllowedHere)
    }

    /// Two jobs on one connection at once (the writer's lock makes it impossible today; the check
    /// is the net if that changes): the second thread's `enter` reports and holds nothing.
    func testASecondThreadTakingAHeldConnectionIsReported() throws {
        let watchdog = ConnectionWatchdog()
        watchdog.guardJobs()
        XCTAssertTrue(watchdog.enter())
        defer { watchdog.leave() }
        let second = Escaped()
        let done = DispatchSemaphore(value: 0)
        let reports = try misuseReports {
            let thread = Thread {
                second.allowedInside = watchdog.enter()
                done.signal()
            }
            thread.start()
            XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        }
        XCTAssertFalse(second.allowedInside)
        XCTAssertEqual(reports.count, 1, "\(reports)")
        XCTAssertTrue(reports.first?.contains("another thread's job holds") == true, "\(reports)")
        XCTAssertTrue(watchdog.allowsCurrentThread, "the first holder still holds it")
    }

    /// A connection no `Database` owns (a tool's or a test's own) has no job to stay inside.
    func testAConnectionNotOpenedByADatabaseIsNotChecked() throws {
        let connection = SQLConnection(sqlite: try SQLiteConnection(path: ":memory:", readOnly: false, configuration: .init()))
        defer { connection.close() }
        XCTAssertTrue(connection.isAllowedHere)
        XCTAssertEqual(try misuseReports { _ = try connection.scalarInt("SELECT 1") }, [])
    }
    #else
    func testTheCheckIsCompiledIntoDebugBuildsOnly() throws {
        throw XCTSkip("the scheduling watchdog exists in debug builds only (SQLConnection+Watchdog.swift); run `swift test` without -c release")
    }
    #endif
}
