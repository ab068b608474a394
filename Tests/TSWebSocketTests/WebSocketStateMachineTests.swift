import XCTest
@testable import TSWebSocket

final class WebSocketStateMachineTests: XCTestCase {
    func testMaskedTextAndBinaryDelivered() {
        XCTAssertEqual(runFrames([clientFrame(.text, "héllo"), clientFrame(.binary, [0, 255])]),
                       [.deliver(.text("héllo")), .deliver(.binary([0, 255]))])
        XCTAssertEqual(runFrames([clientFrame(.text, "")]), [.deliver(.text(""))])
    }

    func testUnmaskedClientFrameIs1002() {
        let actions = runFrames([clientFrame(.text, Array("hi".utf8), masked: false)])
        XCTAssertEqual(actions.count, 1)
        XCTAssertTrue(failure(1002)(actions[0]))
    }

    func testRSVBitsWithoutExtensionAre1002() {
        for rsv: UInt8 in [1, 2, 4, 7] {
            XCTAssertTrue(failure(1002)(runFrames([clientFrame(.text, Array("x".utf8), rsv: rsv)])[0]), "rsv \(rsv)")
        }
        // Also on control frames.
        XCTAssertTrue(failure(1002)(runFrames([clientFrame(.ping, [], rsv: 4)])[0]))
    }

    func testReservedOpcodesAre1002() {
        for raw: UInt8 in [3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF] {
            let actions = runFrames([clientFrame(WebSocketOpcode(rawValue: raw), [1])])
            XCTAssertEqual(actions.count, 1)
            XCTAssertTrue(failure(1002)(actions[0]), "opcode \(raw)")
        }
    }

    func testControlFrameLimits() {
        XCTAssertEqual(runFrames([clientFrame(.ping, [UInt8](repeating: 1, count: 125))]), [.sendPong([UInt8](repeating: 1, count: 125))])
        XCTAssertTrue(failure(1002)(runFrames([clientFrame(.ping, [UInt8](repeating: 1, count: 126))])[0]))
        XCTAssertTrue(failure(1002)(runFrames([clientFrame(.close, closePayload(1000, [UInt8](repeating: 0x61, count: 124)))])[0]))
        // Fragmented control frames.
        XCTAssertTrue(failure(1002)(runFrames([clientFrame(.ping, [1], fin: false)])[0]))
        XCTAssertTrue(failure(1002)(runFrames([clientFrame(.pong, [1], fin: false)])[0]))
    }

    func testPingPong() {
        XCTAssertEqual(runFrames([clientFrame(.ping, Array("Hello".utf8))]), [.sendPong(Array("Hello".utf8))])
        XCTAssertEqual(runFrames([clientFrame(.ping, [])]), [.sendPong([])])
        // Unsolicited pong is ignored.
        XCTAssertEqual(runFrames([clientFrame(.pong, [1, 2]), clientFrame(.text, "a")]), [.deliver(.text("a"))])
    }

    func testFragmentedMessagesReassembledWithInterleavedControlFrames() {
        XCTAssertEqual(runFrames([clientFrame(.text, "Hel", fin: false), clientFrame(.ping, [7]),
                            clientFrame(.continuation, "l", fin: false), clientFrame(.continuation, "o")]),
                       [.sendPong([7]), .deliver(.text("Hello"))])
        XCTAssertEqual(runFrames([clientFrame(.binary, [1], fin: false), clientFrame(.continuation, [], fin: false),
                            clientFrame(.continuation, [2, 3])]),
                       [.deliver(.binary([1, 2, 3]))])
    }

    func testContinuationWithoutStartIs1002() {
        XCTAssertTrue(failure(1002)(runFrames([clientFrame(.continuation, "x")])[0]))
        XCTAssertTrue(failure(1002)(runFrames([clientFrame(.continuation, "x", fin: false)])[0]))
        // After a completed message, too.
        let actions = runFrames([clientFrame(.text, "a"), clientFrame(.continuation, "b")])
        XCTAssertEqual(actions.first, .deliver(.text("a")))
        XCTAssertTrue(failure(1002)(actions[1]))
    }

    func testNewDataFrameDuringFragmentationIs1002() {
        XCTAssertTrue(failure(1002)(runFrames([clientFrame(.text, "a", fin: false), clientFrame(.text, "b")])[0]))
        XCTAssertTrue(failure(1002)(runFrames([clientFrame(.binary, [1], fin: false), clientFrame(.binary, [2], fin: false)])[0]))
    }

    func testMessageSizeLimitIs1009() {
        XCTAssertEqual(runFrames([clientFrame(.binary, [UInt8](repeating: 1, count: 100))], maxMessageSize: 100),
                       [.deliver(.binary([UInt8](repeating: 1, count: 100)))])
        XCTAssertTrue(failure(1009)(runFrames([clientFrame(.binary, [UInt8](repeating: 1, count: 101))], maxMessageSize: 100)[0]))
        // Fragments that individually fit but together don't.
        let frames = [clientFrame(.text, [UInt8](repeating: 0x61, count: 60), fin: false),
                      clientFrame(.continuation, [UInt8](repeating: 0x61, count: 60))]
        XCTAssertTrue(failure(1009)(runFrames(frames, maxMessageSize: 100)[0]))
        // Frame over maxFrameSize → 1009 from the decoder.
        XCTAssertTrue(failure(1009)(runFrames([clientFrame(.binary, [UInt8](repeating: 1, count: 200))], maxFrameSize: 150)[0]))
    }

    func testUTF8ValidAndInvalid() {
        let valid: [UInt8] = [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5]  // "κόσμε"
        XCTAssertEqual(runFrames([clientFrame(.text, valid)]), [.deliver(.text("κόσμε"))])
        for bad: [UInt8] in [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xCE]] {
            XCTAssertTrue(failure(1007)(runFrames([clientFrame(.text, bad)])[0]), "\(bad)")
        }
        // Binary frames are not validated.
        XCTAssertEqual(runFrames([clientFrame(.binary, [0xFF])]), [.deliver(.binary([0xFF]))])
    }

    func testUTF8SplitAcrossFragments() {
        // "€" = E2 82 AC split across three fragments is valid.
        XCTAssertEqual(runFrames([clientFrame(.text, [0xE2], fin: false), clientFrame(.continuation, [0x82], fin: false),
                            clientFrame(.continuation, [0xAC])]),
                       [.deliver(.text("€"))])
        // Fails fast: the first fragment already has an invalid prefix, no more frames needed.
        var p = Pipeline()
        let actions = p.feed(clientFrame(.text, [0x61, 0xF5], fin: false))
        XCTAssertTrue(failure(1007)(actions[0]))
        // A message ending mid-scalar is invalid.
        XCTAssertTrue(failure(1007)(runFrames([clientFrame(.text, [0xE2], fin: false), clientFrame(.continuation, [0x82])])[0]))
    }

    func testInvalidUTF8FailsFastInsideAnIncompleteFrame() {
        // Only the first 4 payload bytes of a 100-byte masked text frame: "ab" + F5 (never valid).
        let frame = clientFrame(.text, [0x61, 0x62, 0xF5, 0x61] + [UInt8](repeating: 0x61, count: 96))
        var p = Pipeline()
        let actions = p.feed(Array(frame.prefix(6 + 4)))  // 2-byte header + 4-byte key + 4 payload bytes
        XCTAssertEqual(actions.count, 1)
        XCTAssertTrue(failure(1007)(actions[0]))

        // In a continuation frame, checked against the message's running state: E2 then 0x41.
        var q = Pipeline()
        XCTAssertEqual(q.feed(clientFrame(.text, [0xE2], fin: false)), [])
        let cont = clientFrame(.continuation, [0x41] + [UInt8](repeating: 0x61, count: 50))
        XCTAssertTrue(failure(1007)(q.feed(Array(cont.prefix(7)))[0]))

        // A valid prefix of an incomplete frame is not an error; binary is never checked.
        var r = Pipeline()
        XCTAssertEqual(r.feed(Array(clientFrame(.text, [0x61, 0xE2, 0x82, 0xAC, 0x61]).prefix(8))), [])
        var b = Pipeline()
        XCTAssertEqual(b.feed(Array(clientFrame(.binary, [0xFF, 0xFF, 0xFF]).prefix(7))), [])
    }

    func testChunkedMultiByteTextThroughPartialChecks() {
        // Multi-byte scalars split at every possible point across reads and masking offsets.
        let text = String(repeating: "añ€𝄞κόσμε", count: 40)
        let wire = clientFrame(.text, Array(text.utf8), fin: false) + clientFrame(.continuation, "ü€", fin: true)
        for chunk in [1, 2, 3, 5, 7, 64] {
            var p = Pipeline()
            XCTAssertEqual(p.feed(wire, chunk: chunk), [.deliver(.text(text + "ü€"))], "chunk \(chunk)")
        }
    }

    func testCloseEchoesValidCodes() {
        for code: UInt16 in [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999] {
            var p = Pipeline()
            XCTAssertEqual(p.feed(clientFrame(.close, closePayload(code, Array("bye".utf8)))),
                           [.sendCloseAndDisconnect(code: code, reason: "")], "code \(code)")
            XCTAssertEqual(p.machine.closeCode, code)
            XCTAssertEqual(p.machine.closeReason, "bye")
            XCTAssertEqual(p.machine.state, .closed)
        }
        XCTAssertEqual(runFrames([clientFrame(.close, [])]), [.sendCloseAndDisconnect(code: nil, reason: "")])
    }

    func testInvalidCloseCodesAre1002() {
        for code: UInt16 in [0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535] {
            XCTAssertTrue(failure(1002)(runFrames([clientFrame(.close, closePayload(code))])[0]), "code \(code)")
        }
        XCTAssertTrue(failure(1002)(runFrames([clientFrame(.close, [0x03])])[0]), "1-byte close body")
    }

    func testCloseReasonInvalidUTF8Is1002() {
        XCTAssertTrue(failure(1002)(runFrames([clientFrame(.close, closePayload(1000, [0xCE, 0xBA, 0xFF]))])[0]))
    }

    func testNothingAfterCloseIsProcessed() {
        XCTAssertEqual(runFrames([clientFrame(.close, closePayload(1000)), clientFrame(.text, "late")]),
                       [.sendCloseAndDisconnect(code: 1000, reason: "")])
    }

    func testLocalCloseWaitsForPeerCloseThenDisconnects() {
        var m = WebSocketStateMachine(maxMessageSize: 100)
        XCTAssertEqual(m.close(code: 1001, reason: "going"), .sendClose(code: 1001, reason: "going"))
        XCTAssertEqual(m.state, .closing)
        XCTAssertEqual(m.close(), .none, "second close is a no-op")
        // Data after our Close is discarded.
        XCTAssertEqual(m.receive(WebSocketFrame(opcode: .text, maskingKey: [0, 0, 0, 0], payload: [0x61])), .none)
        XCTAssertEqual(m.receive(WebSocketFrame(opcode: .close, maskingKey: [0, 0, 0, 0], payload: closePayload(1001))), .disconnect)
        XCTAssertEqual(m.state, .closed)
        XCTAssertEqual(m.closeCode, 1001)
        XCTAssertFalse(m.closeTimeoutElapsed())
    }

    func testLocalCloseTimeout() {
        var m = WebSocketStateMachine(maxMessageSize: 100)
        _ = m.close()
        XCTAssertTrue(m.closeTimeoutElapsed())
        XCTAssertEqual(m.state, .closed)
        XCTAssertEqual(m.receive(WebSocketFrame(opcode: .close, maskingKey: [0, 0, 0, 0])), .none)
    }

    func testFailureRecordsCodeForApplication() {
        var p = Pipeline()
        _ = p.feed(clientFrame(.text, [0xFF]))
        XCTAssertEqual(p.machine.closeCode, 1007)
        XCTAssertEqual(p.machine.state, .closed)
    }
}

final class WebSocketConfigurationTests: XCTestCase {
    func testDefaults() {
        let c = WebSocketConfiguration()
        XCTAssertEqual(c.maxFrameSize, 1_048_576)
        XCTAssertEqual(c.maxMessageSize, 1_048_576)
        XCTAssertEqual(c.closeTimeoutNanoseconds, 5_000_000_000)
        XCTAssertNil(c.allowedOrigins)
        XCTAssertEqual(WebSocketConfiguration(closeTimeout: .milliseconds(250)).closeTimeoutNanoseconds, 250_000_000)
    }
}

final class UTF8ValidatorTests: XCTestCase {
    func testAgreesWithStandardLibraryOnAllTwoByteSequencesAndEdges() {
        for a in 0...255 {
            for b in 0...255 {
                let bytes: [UInt8] = [UInt8(a), UInt8(b)]
                XCTAssertEqual(UTF8Validator.isValid(bytes), String(validating: bytes, as: UTF8.self) != nil, "\(bytes)")
            }
        }
        let cases: [[UInt8]] = [[0xEF, 0xBF, 0xBF], [0xF4, 0x8F, 0xBF, 0xBF], [0xF0, 0x8F, 0xBF, 0xBF],
                                [0xE0, 0x9F, 0xBF], [0xED, 0x9F, 0xBF], [0xED, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80]]
        for c in cases { XCTAssertEqual(UTF8Validator.isValid(c), String(validating: c, as: UTF8.self) != nil, "\(c)") }
    }

    func testIncrementalFeedingMatchesWhole() {
        let text = Array("añ€𝄞 κόσμε".utf8)
        var v = UTF8Validator()
        for byte in text { XCTAssertTrue(v.feed([byte])) }
        XCTAssertTrue(v.isComplete)
    }
}
