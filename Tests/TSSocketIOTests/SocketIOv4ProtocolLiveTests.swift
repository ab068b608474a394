import Foundation
import Logging
import TSEngineIO
import TSHTTP
import TSJSON
import TSSockets
import TSTestSupport
import XCTest
@testable import TSSocketIO

/// Socket.IO v4 protocol over Engine.IO v3 (`allowEIO3`), raw, over real sockets: the implicit
/// connection to `/`, namespace CONNECT with a query string as auth, ERROR packets, and binary
/// events whose attachments travel as v3 binary frames (type byte first).
final class SocketIOv4ProtocolLiveTests: XCTestCase {
    var live: SocketIOLiveServer?
    var io: SocketIOServer? { live?.io }
    var port: Int { live?.port ?? 0 }

    func start() throws {
        live = try SocketIOLiveServer(SocketIOLiveServer.Options {
            $0.engine.allowEIO3 = true
            $0.namespaces = ["/", "/custom"]
        }) { io in
            io.setAuthenticator { handshake, auth in
                // `/` takes its token from the handshake query, `/custom` from its CONNECT query.
                let token = handshake.namespace == "/" ? handshake.query["token"] : auth?["token"]?.stringValue
                return token == "good" ? .accept(userID: "u", data: .null) : .reject(message: "unauthorized")
            }
            io.on("message", withAttachments: { socket, event, _ in
                socket.emit("message-back", event.args, attachments: event.attachments)
            })
        }
    }

    override func tearDown() { live?.stop() }

    func open(_ query: String) throws -> RawWebSocketClient {
        let ws = try RawWebSocketClient(port: port, target: "/socket.io/?EIO=3&transport=websocket\(query)")
        XCTAssertEqual(ws.status, 101)
        guard case .text(let o) = ws.receive(), o.hasPrefix("0{") else { XCTFail("no open packet"); return ws }
        return ws
    }

    func testImplicitMainConnectWithQueryTokenAndBinaryEcho() throws {
        try start()
        let ws = try open("&token=good")
        XCTAssertEqual(ws.receive(), .text("40"), "connected to / without sending CONNECT; no sid payload")
        ws.send("451-[\"message\",{\"_placeholder\":true,\"num\":0}]")
        ws.send(binary: [4, 1, 2, 3])  // v3: the binary frame starts with its packet type
        XCTAssertEqual(ws.receive(), .text("451-[\"message-back\",{\"_placeholder\":true,\"num\":0}]"))
        XCTAssertEqual(ws.receive(), .binary([4, 1, 2, 3]))
    }

    func testImplicitMainConnectRefusedWithoutTokenIsAnErrorString() throws {
        try start()
        let ws = try open("")
        XCTAssertEqual(ws.receive(), .text("44\"unauthorized\""))
    }

    func testNamespaceConnectWithQueryStringAuth() throws {
        try start()
        let ws = try open("&token=good")
        XCTAssertEqual(ws.receive(), .text("40"))
        ws.send("40/custom?token=bad")
        XCTAssertEqual(ws.receive(), .text("44/custom,\"unauthorized\""))
        ws.send("40/custom?token=good")
        XCTAssertEqual(ws.receive(), .text("40/custom,"))
        ws.send("42/custom,[\"message\",\"hi\"]")
        XCTAssertEqual(ws.receive(), .text("42/custom,[\"message-back\",\"hi\"]"))
    }
}
