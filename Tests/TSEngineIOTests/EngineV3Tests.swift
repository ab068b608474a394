import Logging
import TSHTTP
import TSJSON
import TSSockets
import TSTestSupport
import XCTest
@testable import TSEngineIO

/// Engine.IO v3 payload codec (protocol v3, "Payload encoding") with byte fixtures.
final class EngineV3PayloadCodecTests: XCTestCase {
    func testTextFormLengthsCountUTF16CodeUnits() throws {
        // "4é😀": 1 + 1 + 2 UTF-16 units = 4 (UTF-8: 7 bytes).
        let body = Array("4:4é😀2:4x".utf8)
        XCTAssertEqual(try EngineV3PayloadCodec.decodePayload(body), [.message("é😀"), .message("x")])
        let encoded = EngineV3PayloadCodec.encodePayload(segments: [Array("4é😀".utf8), Array("2".utf8)], supportsBinary: false)
        XCTAssertEqual(String(decoding: encoded.body, as: UTF8.self), "4:4é😀1:2")
        XCTAssertFalse(encoded.binary)
    }

    func testTextFormBinaryPacketIsB4Base64() throws {
        XCTAssertEqual(try EngineV3PayloadCodec.decodePayload(Array("10:b4AQIDBA==".utf8)), [.binary([1, 2, 3, 4])])
        let encoded = EngineV3PayloadCodec.encodePayload(segments: [Array("4hi".utf8), Array("bAQIDBA==".utf8)], supportsBinary: false)
        XCTAssertEqual(String(decoding: encoded.body, as: UTF8.self), "3:4hi10:b4AQIDBA==")
    }

    func testBinaryFormRoundTrip() throws {
        // String packet "4hi" (3 bytes) and binary packet type 4 + [1,2,3].
        let body: [UInt8] = [0, 3, 0xFF] + Array("4hi".utf8) + [1, 4, 0xFF, 4, 1, 2, 3]
        XCTAssertEqual(try EngineV3PayloadCodec.decodePayload(body), [.message("hi"), .binary([1, 2, 3])])
        let encoded = EngineV3PayloadCodec.encodePayload(segments: [Array("4hi".utf8), Array("bAQID".utf8)], supportsBinary: true)
        XCTAssertTrue(encoded.binary)
        XCTAssertEqual(encoded.body, body)
    }

    func testMalformedPayloadsAreRefused() {
        for bad in ["5:4hi", "x:4hi", ":4hi", "2:", "2:9x"] {
            XCTAssertThrowsError(try EngineV3PayloadCodec.decodePayload(Array(bad.utf8)), bad)
        }
        XCTAssertThrowsError(try EngineV3PayloadCodec.decodePayload([0, 9, 0xFF, 0x34]))  // length past the end
        XCTAssertThrowsError(try EngineV3PayloadCodec.decodePayload([1, 2, 0xFF, 3, 1]))  // binary packet that is not a message
    }

    func testClientPingsHeartbeat() {
        let ms: UInt64 = 1_000_000
        var hb = EngineHeartbeat(now: 0, pingIntervalNanoseconds: 300 * ms, pingTimeoutNanoseconds: 200 * ms, clientPings: true)
        XCTAssertEqual(hb.tick(now: 499 * ms), .none, "the server never sends a ping to a v3 client")
        hb.pingReceived(now: 400 * ms)
        XCTAssertEqual(hb.tick(now: 899 * ms), .none)
        XCTAssertEqual(hb.tick(now: 900 * ms), .pingTimeout)
    }
}

/// Engine.IO v3 over real sockets (`allowEIO3`), against an echo server.
final class EngineV3LiveTests: XCTestCase {
    let harness = EngineLiveHarness()
    override func tearDown() { harness.stop() }

    func openV3Polling(_ extra: String = "") throws -> String {
        let r = harness.get("EIO=3&transport=polling\(extra)")
        XCTAssertEqual(r.status, 200)
        // `<len>:0{...}`
        guard let colon = r.text.firstIndex(of: ":") else { XCTFail(r.text); return "" }
        let packet = String(r.text[r.text.index(after: colon)...])
        XCTAssertEqual(Int(r.text[..<colon]), packet.utf16.count)
        XCTAssertTrue(packet.hasPrefix("0{"))
        return try XCTUnwrap(try JSONValue.parse(String(packet.dropFirst()))["sid"]?.stringValue)
    }

    func testEIO3IsRefusedUnlessAllowed() throws {
        try harness.start()
        let r = harness.get("EIO=3&transport=polling")
        XCTAssertEqual(r.status, 400)
        XCTAssertEqual(r.text, "{\"code\":5,\"message\":\"Unsupported protocol version\"}")
    }

    func testPollingLengthPrefixedEchoAndClientPing() throws {
        try harness.start { $0.allowEIO3 = true }
        let sid = try openV3Polling("&b64=1")
        XCTAssertEqual(harness.post("EIO=3&transport=polling&sid=\(sid)", "6:4héllo1:2").status, 200)
        let poll = harness.get("EIO=3&transport=polling&sid=\(sid)&b64=1")
        XCTAssertEqual(poll.text, "1:36:4héllo", "the pong to the client's ping (answered by the engine at once), then the echo")
    }

    func testPollingBinaryB64FormAndBinaryForm() throws {
        try harness.start { $0.allowEIO3 = true }
        let sid = try openV3Polling("&b64=1")
        XCTAssertEqual(harness.post("EIO=3&transport=polling&sid=\(sid)", "10:b4AQIDBA==").status, 200)
        XCTAssertEqual(harness.get("EIO=3&transport=polling&sid=\(sid)&b64=1").text, "10:b4AQIDBA==")

        // A client that reads binary payloads (no b64) gets the binary form.
        let sid2 = try openV3Polling()
        let body: [UInt8] = [1, 5, 0xFF, 4, 1, 2, 3, 4]
        XCTAssertEqual(RawHTTP.request(port: harness.port, "POST", "/engine.io/?EIO=3&transport=polling&sid=\(sid2)", body: body).status, 200)
        let poll = harness.get("EIO=3&transport=polling&sid=\(sid2)")
        XCTAssertEqual(poll.headers["content-type"], "application/octet-stream")
        XCTAssertEqual(poll.body, body)
    }

    func testNoClientPingClosesAfterIntervalPlusTimeout() throws {
        try harness.start { $0.allowEIO3 = true }
        let sid = try openV3Polling("&b64=1")
        // No ping sent: after pingInterval 300 + pingTimeout 200 the session is gone.
        XCTAssertTrue(EngineHeartbeatCheck.pollingSessionCloses(pingInterval: 300, pingTimeout: 200) {
            harness.get("EIO=3&transport=polling&sid=\(sid)&b64=1")
        })
    }

    func testWebSocketV3BinaryCarriesTypeByteAndPingIsAnswered() throws {
        try harness.start { $0.allowEIO3 = true }
        let ws = try RawWebSocketClient(port: harness.port, target: "/engine.io/?EIO=3&transport=websocket")
        XCTAssertEqual(ws.status, 101)
        guard case .text(let open) = ws.receive() else { return XCTFail("no open packet") }
        XCTAssertTrue(open.hasPrefix("0{"))
        ws.send("2")
        XCTAssertEqual(ws.receive(), .text("3"))
        ws.send(binary: [4, 9, 8, 7])
        XCTAssertEqual(ws.receive(), .binary([4, 9, 8, 7]))
        ws.send("4text")
        XCTAssertEqual(ws.receive(), .text("4text"))
    }
}
