import Foundation
import TSSockets
import XCTest

/// Every thread the server starts is named (what `top -H`, `ps -L` and `perf` show), and the
/// loop-confined state box lets its loop, and only its loop, reach the value.
final class ThreadTests: XCTestCase {
    /// The calling thread's name as the kernel reports it; nil where there is no /proc.
    static func currentThreadName() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8) else { return nil }
        return text.trimmingCharacters(in: .newlines)
    }

    func testASpawnedThreadRunsUnderItsNameAndJoins() throws {
        guard FileManager.default.fileExists(atPath: "/proc/thread-self/comm") else {
            throw XCTSkip("this system has no /proc/thread-self/comm to read a thread's name from")
        }
        let seen = LockedValue<String?>(nil)
        let thread = try SpawnedThread.spawn(name: "ts-test-named") { seen.withLock { $0 = Self.currentThreadName() } }
        thread.join()
        thread.join()  // idempotent
        XCTAssertEqual(seen.current, "ts-test-named")
    }

    func testADetachedThreadReportsThroughAContinuation() async throws {
        let name: String? = try await withCheckedThrowingContinuation { continuation in
            do {
                try SpawnedThread.detach(name: "ts-test-detach") { continuation.resume(returning: Self.currentThreadName()) }
            } catch {
                continuation.resume(throwing: error)
            }
        }
        if FileManager.default.fileExists(atPath: "/proc/thread-self/comm") {
            XCTAssertEqual(name, "ts-test-detach")
        }
    }

    func testEventLoopThreadsAreNamedByIndex() async throws {
        guard FileManager.default.fileExists(atPath: "/proc/thread-self/comm") else {
            throw XCTSkip("this system has no /proc/thread-self/comm to read a thread's name from")
        }
        let group = try EventLoopGroup(count: 2)
        defer { group.shutdown() }
        var names: [String?] = []
        for loop in group.loops {
            names.append(await withCheckedContinuation { c in loop.execute { c.resume(returning: Self.currentThreadName()) } })
        }
        XCTAssertEqual(names, ["ts-loop-0", "ts-loop-1"])
    }

    func testLoopBoundStateIsReachedOnItsLoop() async throws {
        let loop = try EventLoop()
        defer { loop.shutdown() }
        let counter = EventLoopBound(0, loop: loop)
        XCTAssertEqual(counter.loop === loop, true)
        let total: Int = await withCheckedContinuation { c in
            loop.execute {
                for _ in 0..<10 { counter.withValue { $0 += 1 } }
                counter.value += 5
                c.resume(returning: counter.value)
            }
        }
        XCTAssertEqual(total, 15)
    }

    func testSubmitAndWaitRunsOnTheLoopAndReturnsItsResult() throws {
        let loop = try EventLoop()
        defer { loop.shutdown() }
        XCTAssertFalse(loop.inEventLoop)
        XCTAssertTrue(loop.submitAndWait { loop.inEventLoop })
        let nothing: Int? = loop.submitAndWait { nil }
        XCTAssertNil(nothing)
    }
}
