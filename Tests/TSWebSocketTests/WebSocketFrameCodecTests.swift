import XCTest
@testable import TSWebSocket

final class WebSocketFrameCodecTests: XCTestCase {
    // RFC 6455 §5.7 examples.
    func testRFCExampleUnmaskedText() throws {
        var d = WebSocketFrameDecoder(maxFrameSize: 1024)
        d.append([0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        let f = try XCTUnwrap(d.nextFrame())
        XCTAssertEqual(f, WebSocketFrame(fin: true, opcode: .text, payload: Array("Hello".utf8)))
        XCTAssertNil(try d.nextFrame())
        XCTAssertEqual(WebSocketFrameEncoder.encodeText("Hello"), [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
    }

    func testRFCExampleMaskedText() throws {
        let wire: [UInt8] = [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]
        var d = WebSocketFrameDecoder(maxFrameSize: 1024)
        d.append(wire)
        let f = try XCTUnwrap(d.nextFrame())
        XCTAssertEqual(f.payload, Array("Hello".utf8))
        XCTAssertEqual(f.maskingKey, [0x37, 0xFA, 0x21, 0x3D])
        XCTAssertEqual(clientFrame(.text, "Hello"), wire)
    }

    func testRFCExampleFragmentsAndPingPong() throws {
        var d = WebSocketFrameDecoder(maxFrameSize: 1024)
        d.append([0x01, 0x03, 0x48, 0x65, 0x6C, 0x80, 0x02, 0x6C, 0x6F, 0x89, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        XCTAssertEqual(try d.nextFrame(), WebSocketFrame(fin: false, opcode: .text, payload: Array("Hel".utf8)))
        XCTAssertEqual(try d.nextFrame(), WebSocketFrame(fin: true, opcode: .continuation, payload: Array("lo".utf8)))
        XCTAssertEqual(try d.nextFrame(), WebSocketFrame(fin: true, opcode: .ping, payload: Array("Hello".utf8)))
        XCTAssertNil(try d.nextFrame())
        XCTAssertEqual(WebSocketFrameEncoder.encode(opcode: .pong, payload: Array("Hello".utf8), maskingKey: rfcKey),
                       [0x8A, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
    }

    func testSevenSixteenAndSixtyFourBitLengths() throws {
        for (length, header) in [(125, [0x82, 0x7D]), (126, [0x82, 0x7E, 0x00, 0x7E]), (256, [0x82, 0x7E, 0x01, 0x00]),
                                 (65_535, [0x82, 0x7E, 0xFF, 0xFF]),
                                 (65_536, [0x82, 0x7F, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00])] as [(Int, [UInt8])] {
            let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
            let encoded = WebSocketFrameEncoder.encodeBinary(payload)
            XCTAssertEqual(Array(encoded.prefix(header.count)), header, "length \(length)")
            XCTAssertEqual(encoded.count, header.count + length)
            var d = WebSocketFrameDecoder(maxFrameSize: 100_000)
            d.append(encoded)
            XCTAssertEqual(try d.nextFrame()?.payload, payload)
            // Masked too.
            var m = WebSocketFrameDecoder(maxFrameSize: 100_000)
            m.append(clientFrame(.binary, payload))
            XCTAssertEqual(try m.nextFrame()?.payload, payload, "masked length \(length)")
        }
    }

    func testTooLargeLengthRejectedFromHeaderAlone() {
        // Only the 10-byte header of a 2^62-byte frame: rejected without any payload present,
        // so nothing of that size could have been allocated.
        var d = WebSocketFrameDecoder(maxFrameSize: 1_048_576)
        d.append([0x82, 0xFF, 0x40, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertThrowsError(try d.nextFrame()) { error in
            XCTAssertEqual(error as? WebSocketProtocolError, .frameTooLarge(length: 1 << 62))
            XCTAssertEqual((error as? WebSocketProtocolError)?.closeCode, 1009)
        }
        XCTAssertEqual(d.bufferedByteCount, 0)

        var e = WebSocketFrameDecoder(maxFrameSize: 1000)
        e.append([0x82, 0xFE, 0x03, 0xE9])  // masked, 16-bit length 1001
        XCTAssertThrowsError(try e.nextFrame()) { XCTAssertEqual($0 as? WebSocketProtocolError, .frameTooLarge(length: 1001)) }
        // Exactly at the limit is fine.
        var ok = WebSocketFrameDecoder(maxFrameSize: 1000)
        ok.append(clientFrame(.binary, [UInt8](repeating: 7, count: 1000)))
        XCTAssertEqual(try ok.nextFrame()?.payload.count, 1000)
    }

    func testSixtyFourBitLengthWithMSBSetIsProtocolError() {
        var d = WebSocketFrameDecoder(maxFrameSize: 1024)
        d.append([0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 1])
        XCTAssertThrowsError(try d.nextFrame()) { XCTAssertEqual(($0 as? WebSocketProtocolError)?.closeCode, 1002) }
        // Sticky: later bytes don't resurrect the stream.
        d.append(clientFrame(.text, "x"))
        XCTAssertThrowsError(try d.nextFrame())
    }

    func testRSVAndOpcodeBitsAreDecodedRaw() throws {
        var d = WebSocketFrameDecoder(maxFrameSize: 1024)
        d.append(clientFrame(WebSocketOpcode(rawValue: 0x3), [1], rsv: 0b101))
        let f = try XCTUnwrap(d.nextFrame())
        XCTAssertEqual(f.rsv, 0b101)
        XCTAssertEqual(f.opcode.rawValue, 3)
        XCTAssertFalse(f.opcode.isKnown)
    }

    func testByteByByteEqualsAllAtOnce() throws {
        let wire = clientFrame(.text, "Hel", fin: false) + clientFrame(.continuation, "lo")
            + clientFrame(.ping, [1, 2, 3]) + clientFrame(.binary, [UInt8](repeating: 9, count: 300))
            + clientFrame(.binary, [UInt8](repeating: 5, count: 70_000)) + clientFrame(.close, closePayload(1000))
        var whole = WebSocketFrameDecoder(maxFrameSize: 100_000)
        whole.append(wire)
        var expected: [WebSocketFrame] = []
        while let f = try whole.nextFrame() { expected.append(f) }
        XCTAssertEqual(expected.count, 6)

        var single = WebSocketFrameDecoder(maxFrameSize: 100_000)
        var got: [WebSocketFrame] = []
        for byte in wire {
            single.append([byte])
            while let f = try single.nextFrame() { got.append(f) }
        }
        XCTAssertEqual(got, expected)
        XCTAssertEqual(single.bufferedByteCount, 0)

        // And through the whole pipeline (decoder + state machine).
        var p1 = Pipeline(), p2 = Pipeline()
        XCTAssertEqual(p1.feed(wire), p2.feed(wire, chunk: 1))
        XCTAssertEqual(p1.feed([]).count, 0)
    }

    func testMaskIsInvolutionForAllLengths() {
        for n in 0..<20 {
            let original = (0..<n).map { UInt8($0 * 13 & 0xFF) }
            var bytes = original
            WebSocketFrameDecoder.applyMask(rfcKey, to: &bytes)
            if n > 0 { XCTAssertNotEqual(bytes, original) }
            // Reference: byte-wise XOR.
            let k = [rfcKey.0, rfcKey.1, rfcKey.2, rfcKey.3]
            XCTAssertEqual(bytes, original.enumerated().map { $0.element ^ k[$0.offset % 4] })
            WebSocketFrameDecoder.applyMask(rfcKey, to: &bytes)
            XCTAssertEqual(bytes, original)
        }
    }

    func testCloseEncodingTruncatesReasonOnScalarBoundary() {
        XCTAssertEqual(WebSocketFrameEncoder.encodeClose(code: 1000), [0x88, 0x02, 0x03, 0xE8])
        XCTAssertEqual(WebSocketFrameEncoder.encodeClose(code: nil), [0x88, 0x00])
        let payload = WebSocketFrameEncoder.closePayload(code: 1001, reason: String(repeating: "é", count: 100))
        XCTAssertLessThanOrEqual(payload.count, 125)
        XCTAssertTrue(UTF8Validator.isValid(Array(payload[2...])))
        XCTAssertEqual(payload.count, 124)  // 61 × 2-byte "é" = 122 bytes, + code
    }

    func testEncodeMessageOnceForBroadcast() {
        XCTAssertEqual(WebSocketFrameEncoder.encodeMessage(.text("hi")), [0x81, 0x02, 0x68, 0x69])
        XCTAssertEqual(WebSocketFrameEncoder.encodeMessage(.binary([1, 2])), [0x82, 0x02, 1, 2])
    }
}
