import TSRedis
import XCTest

/// The RESP2 reply decoder over byte fixtures (RESP spec examples), fed at once, split at every
/// point and byte by byte; limits checked from the header alone.
final class RESPDecoderTests: XCTestCase {
    func decodeAll(_ text: String, limits: RESPDecoder.Limits = .init()) throws -> [RESPValue] {
        var d = RESPDecoder(limits: limits)
        return try d.feed(Array(text.utf8))
    }

    func testSpecExamples() throws {
        XCTAssertEqual(try decodeAll("+OK\r\n"), [.simpleString("OK")])
        XCTAssertEqual(try decodeAll("-ERR unknown command 'foobar'\r\n"), [.error("ERR unknown command 'foobar'")])
        XCTAssertEqual(try decodeAll(":1000\r\n:-3\r\n:+7\r\n"), [.integer(1000), .integer(-3), .integer(7)])
        XCTAssertEqual(try decodeAll("$5\r\nhello\r\n$0\r\n\r\n$-1\r\n"), [.bulkString(Array("hello".utf8)), .bulkString([]), .bulkString(nil)])
        XCTAssertEqual(try decodeAll("*0\r\n*-1\r\n"), [.array([]), .array(nil)])
        XCTAssertEqual(try decodeAll("*2\r\n*3\r\n:1\r\n:2\r\n:3\r\n*2\r\n+Hello\r\n-World\r\n"),
                       [.array([.array([.integer(1), .integer(2), .integer(3)]), .array([.simpleString("Hello"), .error("World")])])])
        // A bulk string may hold CR LF and any byte.
        XCTAssertEqual(try decodeAll("$4\r\n\r\n\0\u{7F}\r\n"), [.bulkString([13, 10, 0, 127])])
    }

    static let pubsub = "*3\r\n$9\r\nsubscribe\r\n$16\r\ntouchsync:events\r\n:1\r\n"
        + "*3\r\n$7\r\nmessage\r\n$16\r\ntouchsync:events\r\n$13\r\n{\"v\":1,\"x\":2}\r\n"
        + "*2\r\n$4\r\npong\r\n$0\r\n\r\n:3\r\n+PONG\r\n"

    static let pubsubValues: [RESPValue] = [
        .array([.bulkString(Array("subscribe".utf8)), .bulkString(Array("touchsync:events".utf8)), .integer(1)]),
        .array([.bulkString(Array("message".utf8)), .bulkString(Array("touchsync:events".utf8)), .bulkString(Array("{\"v\":1,\"x\":2}".utf8))]),
        .array([.bulkString(Array("pong".utf8)), .bulkString([])]),
        .integer(3), .simpleString("PONG"),
    ]

    func testPubSubRepliesAtEverySplitPointAndByteByByte() throws {
        let bytes = Array(Self.pubsub.utf8)
        XCTAssertEqual(try decodeAll(Self.pubsub), Self.pubsubValues)
        for split in 0...bytes.count {
            var d = RESPDecoder()
            var got = try d.feed(Array(bytes[..<split]))
            got += try d.feed(Array(bytes[split...]))
            XCTAssertEqual(got, Self.pubsubValues, "split at \(split)")
            XCTAssertTrue(d.isIdle)
        }
        var d = RESPDecoder()
        var got: [RESPValue] = []
        for b in bytes { got += try d.feed([b]) }
        XCTAssertEqual(got, Self.pubsubValues)
    }

    func testPartialValueIsKeptNotReturned() throws {
        var d = RESPDecoder()
        XCTAssertEqual(try d.feed(Array("*3\r\n$7\r\nmessage\r\n$3\r\nab".utf8)), [])
        XCTAssertFalse(d.isIdle)
        XCTAssertEqual(try d.feed(Array("c\r\n:5\r\n".utf8)), [.array([.bulkString(Array("message".utf8)), .bulkString(Array("abc".utf8)), .integer(5)])])
    }

    func testEncoderRoundTrip() throws {
        let command = RESPEncoder.command("PUBLISH", "touchsync:events", "{}")
        XCTAssertEqual(String(decoding: command, as: UTF8.self), "*3\r\n$7\r\nPUBLISH\r\n$16\r\ntouchsync:events\r\n$2\r\n{}\r\n")
        for v in Self.pubsubValues + [.bulkString(nil), .array(nil), .error("ERR x"), .integer(Int64.min + 1)] {
            var d = RESPDecoder()
            XCTAssertEqual(try d.feed(RESPEncoder.encode(v)), [v])
        }
    }

    func assertFails(_ text: String, limits: RESPDecoder.Limits = .init(), contains: String, file: StaticString = #filePath, line: UInt = #line) {
        var d = RESPDecoder(limits: limits)
        XCTAssertThrowsError(try d.feed(Array(text.utf8)), file: file, line: line) { error in
            XCTAssertTrue("\(error)".contains(contains), "\(error)", file: file, line: line)
        }
        // Sticky: the connection is unusable afterwards.
        XCTAssertThrowsError(try d.feed(Array("+OK\r\n".utf8)), file: file, line: line)
    }

    func testLimitsAreCheckedFromTheHeaderBeforeBuffering() {
        let small = RESPDecoder.Limits(maxBulkBytes: 10, maxArrayCount: 3, maxDepth: 2, maxLineBytes: 16, maxValueBytes: 40)
        // Only the header of a 1 GB bulk string arrives: refused at once.
        assertFails("$1000000000\r\n", limits: small, contains: "over the 10-byte limit")
        assertFails("*4\r\n", limits: small, contains: "over the 3-element limit")
        assertFails("*1\r\n*1\r\n*1\r\n", limits: small, contains: "nested deeper than 2")
        assertFails("+0123456789abcdefg", limits: small, contains: "line longer than 16")
        assertFails("*3\r\n$10\r\n0123456789\r\n$10\r\n0123456789\r\n$10\r\n", limits: small, contains: "value larger than 40")
    }

    func testMalformedInputFails() {
        assertFails("?x\r\n", contains: "unknown type byte")
        assertFails(":12a\r\n", contains: "bad integer")
        assertFails(":99999999999999999999\r\n", contains: "bad integer")
        assertFails(":9223372036854775808\r\n", contains: "integer overflow")
        assertFails("$-2\r\n", contains: "negative bulk length")
        assertFails("$3\r\nabcX\r\n", contains: "not followed by CRLF")
        assertFails("+OK\rX", contains: "CR not followed by LF")
        assertFails("+OK\n", contains: "bare LF")
        assertFails("\r\n", contains: "empty line")
        // RESP3 types are never asked for.
        assertFails("%1\r\n", contains: "unknown type byte")
    }

    func testLargeBulkTrickledIsLinear() throws {
        // 1 MiB fed 1 KiB at a time: each byte is copied once (no re-parse of what was kept).
        let payload = [UInt8](repeating: 0x61, count: 1 << 20)
        var bytes = Array("$\(payload.count)\r\n".utf8) + payload + [13, 10]
        bytes += Array(":1\r\n".utf8)
        var d = RESPDecoder()
        var got: [RESPValue] = []
        var i = 0
        while i < bytes.count {
            let j = min(bytes.count, i + 1024)
            got += try d.feed(Array(bytes[i..<j]))
            i = j
        }
        XCTAssertEqual(got, [.bulkString(payload), .integer(1)])
    }
}
