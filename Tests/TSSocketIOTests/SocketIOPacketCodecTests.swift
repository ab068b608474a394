import TSJSON
import XCTest
@testable import TSSocketIO

/// Byte fixtures for Socket.IO v5 packets (Socket.IO v5 protocol, "Packet encoding" and the
/// official test suite's wire strings).
final class SocketIOPacketCodecTests: XCTestCase {
    private func decode(_ s: String) throws -> SocketIOPacket { try SocketIOPacketCodec.decode(s) }
    private func encode(_ p: SocketIOPacket) -> String { SocketIOPacketCodec.encodeString(p) }

    func testConnectForms() throws {
        XCTAssertEqual(try decode("0"), SocketIOPacket(type: .connect))
        XCTAssertEqual(try decode("0/,{\"token\":\"123\"}"), SocketIOPacket(type: .connect, data: ["token": "123"]))
        XCTAssertEqual(try decode("0{\"token\":\"123\"}"), SocketIOPacket(type: .connect, data: ["token": "123"]))
        XCTAssertEqual(try decode("0/custom,"), SocketIOPacket(type: .connect, namespace: "/custom"))
        XCTAssertEqual(try decode("0/custom"), SocketIOPacket(type: .connect, namespace: "/custom"))
        XCTAssertEqual(try decode("0/custom,{\"token\":\"abc\"}"),
                       SocketIOPacket(type: .connect, namespace: "/custom", data: ["token": "abc"]))
        XCTAssertThrowsError(try decode("0[1]"), "CONNECT payload must be an object")
        XCTAssertThrowsError(try decode("0\"x\""))
    }

    func testConnectRepliesAndErrors() {
        XCTAssertEqual(encode(SocketIOPacket(type: .connect, data: ["sid": "abc"])), "0{\"sid\":\"abc\"}")
        XCTAssertEqual(encode(SocketIOPacket(type: .connect, namespace: "/custom", data: ["sid": "abc"])), "0/custom,{\"sid\":\"abc\"}")
        XCTAssertEqual(encode(SocketIOPacket(type: .connectError, data: ["message": "unauthorized"])), "4{\"message\":\"unauthorized\"}")
        XCTAssertEqual(encode(SocketIOPacket(type: .connectError, namespace: "/random", data: ["message": "Invalid namespace"])),
                       "4/random,{\"message\":\"Invalid namespace\"}")
    }

    func testEventAckAndDisconnect() throws {
        let e = try decode("2[\"message\",1,\"2\",{\"3\":[true]}]")
        XCTAssertEqual(e.type, .event)
        XCTAssertEqual(e.eventName, "message")
        XCTAssertEqual(e.eventArguments, [1, "2", ["3": [true]]])
        XCTAssertNil(e.ackID)
        XCTAssertEqual(encode(SocketIOPacketCodec.event("message-back", [1, "2", ["3": [true]]])),
                       "2[\"message-back\",1,\"2\",{\"3\":[true]}]")

        let withAck = try decode("2456[\"message-with-ack\",1,\"2\",{\"3\":[false]}]")
        XCTAssertEqual(withAck.ackID, 456)
        XCTAssertEqual(encode(SocketIOPacketCodec.ack(456, [1, "2", ["3": [false]]])), "3456[1,\"2\",{\"3\":[false]}]")
        XCTAssertEqual(encode(SocketIOPacketCodec.event("hi", [], namespace: "/custom", ackID: 12)), "2/custom,12[\"hi\"]")

        let ack = try decode("3/custom,7[\"ok\"]")
        XCTAssertEqual(ack, SocketIOPacket(type: .ack, namespace: "/custom", data: ["ok"], ackID: 7))

        XCTAssertEqual(try decode("1"), SocketIOPacket(type: .disconnect))
        XCTAssertEqual(try decode("1/custom,"), SocketIOPacket(type: .disconnect, namespace: "/custom"))
        XCTAssertEqual(encode(SocketIOPacket(type: .disconnect)), "1")
    }

    func testBinaryEventPlaceholdersAndReassembly() throws {
        var r = SocketIOBinaryReassembler()
        XCTAssertNil(try r.receive(text: "52-[\"message\",{\"_placeholder\":true,\"num\":0},{\"_placeholder\":true,\"num\":1}]"))
        XCTAssertTrue(r.isWaiting)
        XCTAssertNil(try r.receive(binary: [1, 2, 3]))
        let p = try XCTUnwrap(try r.receive(binary: [4, 5, 6]))
        XCTAssertEqual(p.type, .binaryEvent)
        XCTAssertEqual(p.attachments, [[1, 2, 3], [4, 5, 6]])
        XCTAssertEqual(p.eventArguments.compactMap(SocketIOPacket.placeholderIndex), [0, 1])
        XCTAssertFalse(r.isWaiting)

        let out = SocketIOPacketCodec.event("message-back", [SocketIOPacket.placeholder(0), SocketIOPacket.placeholder(1)],
                                            attachments: [[1, 2, 3], [4, 5, 6]])
        XCTAssertEqual(encode(out), "52-[\"message-back\",{\"_placeholder\":true,\"num\":0},{\"_placeholder\":true,\"num\":1}]")
        let ack = SocketIOPacketCodec.ack(789, [SocketIOPacket.placeholder(0)], attachments: [[9]])
        XCTAssertEqual(encode(ack), "61-789[{\"_placeholder\":true,\"num\":0}]")
        XCTAssertEqual(try decode("62-789[{\"_placeholder\":true,\"num\":0},{\"_placeholder\":true,\"num\":1}]").ackID, 789)
        XCTAssertEqual(try decode("51-/custom,3[\"x\",{\"_placeholder\":true,\"num\":0}]").namespace, "/custom")
    }

    func testReassemblerRejectsOutOfOrderParts() {
        var r = SocketIOBinaryReassembler()
        XCTAssertThrowsError(try r.receive(binary: [1])) { XCTAssertEqual($0 as? SocketIODecodeError, .unexpectedBinary) }
        XCTAssertNil(try r.receive(text: "51-[\"a\",{\"_placeholder\":true,\"num\":0}]"))
        XCTAssertThrowsError(try r.receive(text: "2[\"a\"]")) { XCTAssertEqual($0 as? SocketIODecodeError, .unexpectedText) }
        var small = SocketIOBinaryReassembler(maxAttachments: 2)
        XCTAssertThrowsError(try small.receive(text: "53-[\"a\"]")) { XCTAssertEqual($0 as? SocketIODecodeError, .tooManyAttachments) }
    }

    func testMalformedPackets() {
        let bad = [
            "", "abc", "7", "9[\"x\"]",              // bad type
            "2{}", "2\"x\"", "2", "2[]", "2[1]",     // payload not an array / empty / name not a string
            "2abc[\"message-with-ack\",1]",          // bad ack id
            "2[\"x\"", "3[\"unterminated",           // bad JSON
            "3[1]",                                  // ack without id
            "1{}",                                   // disconnect with payload
            "5[\"a\"]", "5x-[\"a\"]",                // binary without attachment count
            "21234567890123456[\"x\"]",              // ack id too long
            "4", "4[1]",                             // connect error without message
        ]
        for s in bad { XCTAssertThrowsError(try decode(s), "\(s) should be rejected") }
    }
}
