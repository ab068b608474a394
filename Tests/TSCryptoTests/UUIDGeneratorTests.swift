import Dispatch
import TSCrypto
import XCTest

/// `UUIDGenerator.lowercaseV4` takes its bytes from a pool of the CSPRNG's output (a block at a
/// time): across block refills and from many threads at once, every id is a well-formed version-4
/// UUID and none repeats.
final class UUIDGeneratorTests: XCTestCase {
    static func assertWellFormed(_ uuid: String, file: StaticString = #filePath, line: UInt = #line) {
        let b = Array(uuid.utf8)
        XCTAssertEqual(b.count, 36, uuid, file: file, line: line)
        for (i, c) in b.enumerated() {
            if [8, 13, 18, 23].contains(i) {
                XCTAssertEqual(c, UInt8(ascii: "-"), uuid, file: file, line: line)
            } else {
                XCTAssertTrue("0123456789abcdef".utf8.contains(c), uuid, file: file, line: line)
            }
        }
        XCTAssertEqual(b[14], UInt8(ascii: "4"), "version 4: \(uuid)", file: file, line: line)
        XCTAssertTrue("89ab".utf8.contains(b[19]), "variant 10xx: \(uuid)", file: file, line: line)
    }

    func testIdsAcrossSeveralPoolBlocksAreWellFormedAndDistinct() {
        // 16 bytes each: 1,000 ids span four 4 KiB blocks.
        let ids = (0..<1000).map { _ in UUIDGenerator.lowercaseV4() }
        for id in ids { Self.assertWellFormed(id) }
        XCTAssertEqual(Set(ids).count, ids.count)
        // Every hex digit shows up in the random positions (the bytes are not a constant pattern).
        let digits = Set(ids.joined().utf8).subtracting([UInt8(ascii: "-")])
        XCTAssertEqual(digits.count, 16)
    }

    func testIdsFromManyThreadsAtOnceAreDistinct() {
        let perThread = 500, threads = 8
        let results = UnsafeMutableBufferPointer<String>.allocate(capacity: perThread * threads)
        results.initialize(repeating: "")
        defer { results.deinitialize(); results.deallocate() }
        nonisolated(unsafe) let out = results
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for i in 0..<perThread { out[t * perThread + i] = UUIDGenerator.lowercaseV4() }
        }
        XCTAssertEqual(Set(results).count, perThread * threads)
        for id in results.prefix(50) { Self.assertWellFormed(id) }
    }
}
