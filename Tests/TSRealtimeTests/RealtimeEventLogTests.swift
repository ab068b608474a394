import TSJSON
import TSRealtime
import TSSocketIO
import XCTest

/// The event log's bounds: entries and approximate bytes, oldest evicted first.
final class RealtimeEventLogTests: XCTestCase {
    func record(_ log: RealtimeEventLog, _ payload: JSONValue) {
        log.record(SocketIOEmitRecord(event: "e", args: [payload], target: .room("room:r"), except: nil, recipients: 1))
    }

    func testByteBoundEvictsTheOldestAndKeepsSequenceNumbers() {
        let log = RealtimeEventLog(capacity: 1000, maxBytes: 64 * 1024)
        let chunk = JSONValue.string(String(repeating: "x", count: 10_000))
        for _ in 0..<20 { record(log, chunk) }
        XCTAssertLessThanOrEqual(log.heldBytes, 64 * 1024)
        let page = log.events(since: 0, limit: 1000)
        XCTAssertEqual(page.lastSequence, 20)
        XCTAssertEqual(page.entries.last?.sequence, 20, "the newest survive")
        XCTAssertEqual(page.entries.count, 6, "64 KiB holds six 10 KB payloads")
        XCTAssertEqual(page.missed, 14)
    }

    func testCountBoundAndTruncationOfAHugePayload() throws {
        let log = RealtimeEventLog(capacity: 3, maxBytes: 1 << 20)
        for i in 0..<5 { record(log, .int(Int64(i))) }
        XCTAssertEqual(log.events(since: 0, limit: 10).entries.map(\.sequence), [3, 4, 5])
        record(log, .string(String(repeating: "y", count: 400_000)))
        let huge = try XCTUnwrap(log.events(since: 5, limit: 10).entries.first)
        XCTAssertEqual(huge.args.first?["_truncated"], true)
        XCTAssertEqual(huge.args.first?["approximateBytes"]?.intValue, 400_002)
        XCTAssertLessThan(log.heldBytes, 1000)
        log.clear()
        XCTAssertEqual(log.heldBytes, 0)
    }

    func testApproximateSizeMatchesSerializationForPlainJSON() {
        let v: JSONValue = ["a": [1, "bc", nil, true], "d": ["e": "f"]]
        // Exact but for the one integer, estimated at 8 bytes (it takes 1).
        XCTAssertEqual(v.approximateByteCount, v.serialized().count + 7)
    }
}
