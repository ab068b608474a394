import Foundation
import XCTest
@testable import TSStorage

/// A fresh temporary directory, removed at the end of the test.
func makeTemporaryDirectory(_ testCase: XCTestCase) throws -> String {
    let dir = NSTemporaryDirectory() + "tsstorage-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    testCase.addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
    return dir
}

/// A thread-safe flag/counter for coordinating with jobs on the writer thread.
final class Signal: @unchecked Sendable {
    // Invariant: `value` is only touched with `lock` held.
    private let lock = NSLock()
    private var value = 0
    func set(_ v: Int = 1) { lock.lock(); value = v; lock.unlock() }
    var current: Int { lock.lock(); defer { lock.unlock() }; return value }
}

/// Polls `condition` (no fixed sleeps as assertions): fails after `seconds`.
func waitUntil(_ seconds: Double = 10, file: StaticString = #filePath, line: UInt = #line,
               _ condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline {
            XCTFail("condition not met within \(seconds)s", file: file, line: line)
            return
        }
        try await Task.sleep(nanoseconds: 1_000_000)
    }
}

struct TestError: Error, Equatable { var tag: String }
