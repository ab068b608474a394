import TSJSON
import TSTestSupport
import XCTest

/// Rooms belong to their namespace (Socket.IO v5; one adapter per namespace, as the reference
/// server and socketioxide keep them): a room emit in `/` never reaches a socket of `/custom`
/// that joined a room of the same name. Run against the real conformance server and its two
/// namespaces.
final class NamespaceRoomsLiveTests: XCTestCase {
    var server: ConformanceServerProcess?

    override func tearDown() { server?.stop() }

    /// Opens a websocket session and connects it to `namespace`; nil (with a failure) otherwise.
    func connect(_ port: Int, namespace: String) -> RawWebSocketClient? {
        guard let ws = try? RawWebSocketClient(port: port, target: "/socket.io/?EIO=4&transport=websocket"), ws.status == 101 else {
            XCTFail("websocket handshake failed"); return nil
        }
        guard case .text(let open) = ws.receive(), open.hasPrefix("0{") else { XCTFail("no open packet"); return nil }
        let nsp = namespace == "/" ? "" : "\(namespace),"
        ws.send("40\(nsp)")
        guard case .text(let reply) = ws.receiveSkippingPings(), reply.hasPrefix("40\(nsp){") else { XCTFail("no CONNECT reply"); return nil }
        guard case .text(let auth) = ws.receiveSkippingPings(), auth.hasPrefix("42\(nsp)[\"auth\"") else { XCTFail("no auth event"); return nil }
        return ws
    }

    func testRoomEmitStaysInItsNamespace() throws {
        let server = try ConformanceServerProcess()
        self.server = server
        guard let main = connect(server.port, namespace: "/"),
              let custom = connect(server.port, namespace: "/custom") else { return }

        // Both join a room named "r", each in its own namespace.
        main.send("421[\"join\",\"r\"]")
        XCTAssertEqual(main.receiveSkippingPings(), .text("431[true]"))
        custom.send("42/custom,1[\"join\",\"r\"]")
        XCTAssertEqual(custom.receiveSkippingPings(), .text("43/custom,1[true]"))

        // A room emit in `/` reaches the one member of `/`'s room "r" only.
        main.send("422[\"to-room\",\"r\",\"from-main\"]")
        XCTAssertEqual(main.receiveSkippingPings(), .text("42[\"room-message\",\"from-main\"]"))
        XCTAssertEqual(main.receiveSkippingPings(), .text("432[1]"))

        // The `/custom` socket's next packet is its own room's message, not the one of `/`.
        custom.send("42/custom,2[\"to-room\",\"r\",\"from-custom\"]")
        XCTAssertEqual(custom.receiveSkippingPings(), .text("42/custom,[\"room-message\",\"from-custom\"]"))
        XCTAssertEqual(custom.receiveSkippingPings(), .text("43/custom,2[1]"))
    }

    func testOneConnectionInTwoNamespacesGetsOnlyTheRoomOfTheEmittingNamespace() throws {
        let server = try ConformanceServerProcess()
        self.server = server
        guard let ws = connect(server.port, namespace: "/") else { return }
        ws.send("40/custom,")
        guard case .text(let reply) = ws.receiveSkippingPings(), reply.hasPrefix("40/custom,{") else { return XCTFail("no CONNECT reply") }
        XCTAssertEqual(ws.receiveSkippingPings(), .text("42/custom,[\"auth\",{}]"))

        ws.send("42/custom,1[\"join\",\"r\"]")
        XCTAssertEqual(ws.receiveSkippingPings(), .text("43/custom,1[true]"))
        // `/` never joined "r": the emit in `/` has no recipient, and nothing arrives for `/custom`.
        ws.send("422[\"to-room\",\"r\",\"x\"]")
        XCTAssertEqual(ws.receiveSkippingPings(), .text("432[0]"))
        ws.send("42/custom,3[\"to-room\",\"r\",\"y\"]")
        XCTAssertEqual(ws.receiveSkippingPings(), .text("42/custom,[\"room-message\",\"y\"]"))
        XCTAssertEqual(ws.receiveSkippingPings(), .text("43/custom,3[1]"))
    }
}
