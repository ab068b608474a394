import TSCrypto
import XCTest
@testable import TSEngineIO

/// Byte fixtures for Engine.IO v4 packets and payloads (Engine.IO v4 protocol, "Packet
/// encoding", "Payload encoding").
final class EnginePacketCodecTests: XCTestCase {
    private func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    func testEncodesEveryTextPacketType() {
        let cases: [(EnginePacket, String)] = [
            (EnginePacket(.open, "{\"sid\":\"x\"}"), "0{\"sid\":\"x\"}"),
            (EnginePacket(.close), "1"),
            (EnginePacket(.ping), "2"),
            (EnginePacket(.ping, "probe"), "2probe"),
            (EnginePacket(.pong), "3"),
            (EnginePacket(.pong, "probe"), "3probe"),
            (EnginePacket.message("hello €"), "4hello €"),
            (EnginePacket(.upgrade), "5"),
            (EnginePacket(.noop), "6"),
        ]
        for (packet, wire) in cases {
            XCTAssertEqual(EnginePacketCodec.encodeTextString(packet), wire)
            XCTAssertEqual(EnginePacketCodec.encodePayload([packet]), bytes(wire))
            XCTAssertEqual(try EnginePacketCodec.decodeText(wire), packet)
            XCTAssertEqual(try EnginePacketCodec.decodeText(bytes(wire)[...]), packet)
        }
    }

    func testPayloadJoinsPacketsWithRecordSeparator() throws {
        let packets = [EnginePacket.message("test1"), .message("test2"), .message("test3")]
        XCTAssertEqual(EnginePacketCodec.encodePayload(packets), bytes("4test1\u{1e}4test2\u{1e}4test3"))
        XCTAssertEqual(try EnginePacketCodec.decodePayload(bytes("4test1\u{1e}4test2\u{1e}4test3")), packets)
    }

    func testBinaryInPollingPayloadIsBase64() throws {
        let packets = [EnginePacket.message("hello"), .binary([1, 2, 3, 4])]
        XCTAssertEqual(EnginePacketCodec.encodePayload(packets), bytes("4hello\u{1e}bAQIDBA=="))
        XCTAssertEqual(try EnginePacketCodec.decodePayload(bytes("4hello\u{1e}bAQIDBA==")), packets)
        // A lone "b" segment is an empty binary message.
        XCTAssertEqual(try EnginePacketCodec.decodePayload(bytes("b")), [.binary([])])
    }

    func testBinaryWebSocketFrameIsAMessage() {
        XCTAssertEqual(EnginePacketCodec.decodeBinaryFrame([1, 2, 3]), .binary([1, 2, 3]))
    }

    func testInvalidPacketsAreRejected() {
        XCTAssertThrowsError(try EnginePacketCodec.decodeText("abc")) { XCTAssertEqual($0 as? EngineDecodeError, .unknownType(0x61)) }
        XCTAssertThrowsError(try EnginePacketCodec.decodeText("7")) { XCTAssertEqual($0 as? EngineDecodeError, .unknownType(0x37)) }
        XCTAssertThrowsError(try EnginePacketCodec.decodeText("")) { XCTAssertEqual($0 as? EngineDecodeError, .empty) }
        XCTAssertThrowsError(try EnginePacketCodec.decodePayload(bytes("abc")))
        XCTAssertThrowsError(try EnginePacketCodec.decodePayload([]))
        XCTAssertThrowsError(try EnginePacketCodec.decodePayload(bytes("4a\u{1e}")))  // empty trailing packet
        XCTAssertThrowsError(try EnginePacketCodec.decodePayload(bytes("b!!!")))  // bad base64
        XCTAssertThrowsError(try EnginePacketCodec.decodePayload([0x34, 0xFF, 0xFE]))  // bad UTF-8
        // "b" is only a binary marker in polling payloads, never on a WebSocket text frame.
        XCTAssertThrowsError(try EnginePacketCodec.decodeText("bAQID"))
    }

    func testBase64RoundTrips() {
        for n in 0..<10 {
            let data = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250) }
            XCTAssertEqual(Base64.decode(bytes: Array(Base64.encode(data).utf8)), data)
        }
        XCTAssertEqual(Base64.encode([0xFB, 0xFF]), "+/8=")
        XCTAssertNil(Base64.decode(bytes: Array("A=A=".utf8)))
        XCTAssertNil(Base64.decode(bytes: Array("A".utf8)))
    }

    func testPollingQueueBoundsTheBacklogNotTheSizeOfOnePacket() {
        var q = EnginePollingQueue(maxBytes: 10)
        let big = bytes("4" + String(repeating: "x", count: 19))
        XCTAssertTrue(q.append(big))                 // one packet of any size waits for the next GET
        XCTAssertTrue(q.append(bytes("4abc")))       // backlog 4 + 1 separator = 5
        XCTAssertTrue(q.append(bytes("4def")))       // backlog 10
        XCTAssertFalse(q.append(bytes("4")))         // backlog would be 12: slow consumer
        XCTAssertEqual(q.bufferedBytes, 30)
        XCTAssertEqual(q.drainPayload(), big + bytes("\u{1e}4abc\u{1e}4def"))
        XCTAssertTrue(q.isEmpty)
        XCTAssertTrue(q.append(bytes("4abc")))
        XCTAssertTrue(q.append(bytes("4def")))       // the largest (4) is exempt: backlog 5
        XCTAssertTrue(q.append(bytes("4gh")))        // backlog 9
        XCTAssertFalse(q.append(bytes("4ijk")))      // backlog 14
        _ = q.drainPayload()
        let two = [bytes("4" + String(repeating: "a", count: 24)), bytes("4" + String(repeating: "b", count: 24))]
        XCTAssertFalse(q.append(contentsOf: two))    // the second large one is backlog; all or none
        XCTAssertTrue(q.isEmpty)
    }
}
