import Foundation
import Logging
import TSEngineIO
import TSHTTP
import TSJSON
import TSSockets
import TSTestSupport
import XCTest
@testable import TSSocketIO

/// Set-up pacing (`EngineSetupPacing`, on for the official test suites), over a real socket:
/// the CONNECT reply and the connect handler's first emit
/// never leave in one write. With a set-up gap long enough to make the check deterministic
/// (200 ms), the client's first read holds the CONNECT reply frame and nothing else.
final class SetupPacingLiveTests: XCTestCase {
    var live: SocketIOLiveServer?

    override func tearDown() { live?.stop() }

    func testConnectReplyArrivesAloneThenTheHandlersEmits() throws {
        let live = try SocketIOLiveServer(SocketIOLiveServer.Options {
            $0.engine.setupPacing = EngineSetupPacing(gap: .milliseconds(200))
        }) { io in
            io.onConnect { socket in
                socket.emit("auth", [.object(JSONObject())])
                socket.emit("second", [])
            }
        }
        self.live = live
        let port = live.port

        let ws = try RawWebSocketClient(port: port, target: "/socket.io/?EIO=4&transport=websocket")
        guard case .text(let open) = ws.receive(), open.hasPrefix("0{") else { return XCTFail("no open packet") }
        ws.send("40")
        ws.setReceiveTimeout(3)
        guard case .bytes(let first) = ws.read() else { return XCTFail("no CONNECT reply") }
        let firstFrames = RawWebSocketFrame.decodeAll(first)
        XCTAssertEqual(firstFrames.count, 1, "the CONNECT reply is alone in its read")
        XCTAssertTrue(firstFrames.first.map { String(decoding: $0.payload, as: UTF8.self).hasPrefix("40{") } ?? false)
        // Then what the handler emitted, together, in order.
        var rest: [String] = []
        while rest.count < 2, case .bytes(let more) = ws.read() {
            rest += RawWebSocketFrame.decodeAll(more).map { String(decoding: $0.payload, as: UTF8.self) }
        }
        XCTAssertEqual(rest, ["42[\"auth\",{}]", "42[\"second\"]"])
    }
}
