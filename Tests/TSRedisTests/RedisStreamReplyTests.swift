@testable import TSRedis
import XCTest

/// The replies the stream reader reads (https://redis.io/docs/latest/commands/xread/): an `XREAD`
/// answer is five arrays deep, which the pub/sub limits refuse and the reader's accept; entries
/// come out as ids and payloads in stream order.
final class RedisStreamReplyTests: XCTestCase {
    static func entry(_ id: String, _ payload: String) -> RESPValue {
        .array([.bulkString(Array(id.utf8)), .array([.bulkString(Array("e".utf8)), .bulkString(Array(payload.utf8))])])
    }

    static let xread = RESPValue.array([.array([.bulkString(Array("k:events".utf8)),
                                                .array([entry("1-0", "one"), entry("1-1", "two"), entry("2-0", "three")])])])

    func testAnXREADReplyDecodesWithTheReadersLimitsOnlyAndGivesEntriesInOrder() throws {
        let bytes = RESPEncoder.encode(Self.xread)
        var config = RedisConfiguration(url: try RedisURL(parsing: "redis://127.0.0.1"))
        var pubsub = RESPDecoder(limits: config.decoderLimits)
        XCTAssertThrowsError(try pubsub.feed(bytes), "pub/sub connections accept 4 levels only")
        config.streamReadCount = 3
        var reader = RESPDecoder(limits: config.decoderLimits)
        let values = try reader.feed(bytes)
        XCTAssertEqual(values, [Self.xread])
        guard case .array(let streams?) = values[0], case .array(let pair?) = streams[0] else { return XCTFail("shape") }
        let entries = RedisStreamReader.entries(pair[1])
        XCTAssertEqual(entries.map(\.id), ["1-0", "1-1", "2-0"])
        XCTAssertEqual(entries.map { $0.payload.map { String(decoding: $0, as: UTF8.self) } }, ["one", "two", "three"])
    }

    func testAnEntryWithoutFieldsKeepsItsIdSoTheReaderMovesPastIt() {
        let reply = RESPValue.array([.array([.bulkString(Array("3-0".utf8)), .array([])]), Self.entry("4-0", "x")])
        let entries = RedisStreamReader.entries(reply)
        XCTAssertEqual(entries.map(\.id), ["3-0", "4-0"])
        XCTAssertNil(entries[0].payload)
        XCTAssertEqual(RedisStreamReader.entries(.array(nil)).count, 0, "a timed-out XREAD is a null array")
    }
}
