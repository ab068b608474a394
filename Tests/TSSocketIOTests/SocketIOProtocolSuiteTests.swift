import Foundation
import TSJSON
import TSTestSupport
import XCTest

/// Every case of the official Socket.IO v5 protocol test suite (socketio/socket.io-protocol,
/// `test-suite/test-suite.js`), restated in our own words against the real conformance server's
/// `/socket.io/` (namespaces `/` and `/custom`; the connect handler emits `auth` with the
/// CONNECT payload; `message` → `message-back`; `message-with-ack` acks its arguments). Each
/// test is named `test_SIO_<describe path>_<case title>`.
final class SocketIOProtocolSuiteTests: ConformanceSuiteCase {
    let m = "/socket.io/"

    /// The suite's `initSocketIOConnection`: websocket, open packet, `40`, CONNECT reply, `auth`.
    func connectedSocket() throws -> RawWebSocketClient {
        let ws = try webSocket("\(m)?EIO=4&transport=websocket")
        XCTAssertEqual(ws.status, 101)
        _ = ws.receive()  // Engine.IO handshake
        ws.send("40")
        guard case .text(let reply) = ws.receiveSkippingPings(), reply.hasPrefix("40{") else { XCTFail("no CONNECT reply"); return ws }
        XCTAssertEqual(ws.receiveSkippingPings(), .text("42[\"auth\",{}]"))
        return ws
    }

    // MARK: Engine.IO protocol / handshake

    // "Engine.IO protocol › handshake › HTTP long-polling › should successfully open a session"
    func test_SIO_engine_handshake_polling_should_successfully_open_a_session() throws {
        try handshakePollingOpensASession(m)
    }

    // "… › HTTP long-polling › should fail with an invalid 'EIO' query parameter"
    func test_SIO_engine_handshake_polling_should_fail_with_an_invalid_EIO_query_parameter() {
        handshakePollingRefusesAnInvalidEIO(m)
    }

    // "… › HTTP long-polling › should fail with an invalid 'transport' query parameter"
    func test_SIO_engine_handshake_polling_should_fail_with_an_invalid_transport_query_parameter() {
        handshakePollingRefusesAnInvalidTransport(m)
    }

    // "… › HTTP long-polling › should fail with an invalid request method"
    func test_SIO_engine_handshake_polling_should_fail_with_an_invalid_request_method() {
        handshakePollingRefusesAnInvalidMethod(m)
    }

    // "… › WebSocket › should successfully open a session"
    func test_SIO_engine_handshake_websocket_should_successfully_open_a_session() throws {
        try handshakeWebSocketOpensASession(m)
    }

    // "… › WebSocket › should fail with an invalid 'EIO' query parameter"
    func test_SIO_engine_handshake_websocket_should_fail_with_an_invalid_EIO_query_parameter() throws {
        try handshakeWebSocketRefusesAnInvalidEIO(m)
    }

    // "… › WebSocket › should fail with an invalid 'transport' query parameter"
    func test_SIO_engine_handshake_websocket_should_fail_with_an_invalid_transport_query_parameter() throws {
        try handshakeWebSocketRefusesAnInvalidTransport(m)
    }

    // MARK: Engine.IO protocol / heartbeat

    // "Engine.IO protocol › heartbeat › HTTP long-polling › should send ping/pong packets"
    func test_SIO_engine_heartbeat_polling_should_send_ping_pong_packets() throws {
        try heartbeatPollingAnswersPings(m)
    }

    // "… › HTTP long-polling › should close the session upon ping timeout"
    func test_SIO_engine_heartbeat_polling_should_close_the_session_upon_ping_timeout() throws {
        try heartbeatPollingClosesOnPingTimeout(m)
    }

    // "… › WebSocket › should send ping/pong packets"
    func test_SIO_engine_heartbeat_websocket_should_send_ping_pong_packets() throws {
        try heartbeatWebSocketAnswersPings(m)
    }

    // "… › WebSocket › should close the session upon ping timeout"
    func test_SIO_engine_heartbeat_websocket_should_close_the_session_upon_ping_timeout() throws {
        try heartbeatWebSocketClosesOnPingTimeout(m)
    }

    // MARK: Engine.IO protocol / close

    // "Engine.IO protocol › close › HTTP long-polling › should forcefully close the session"
    func test_SIO_engine_close_polling_should_forcefully_close_the_session() throws {
        let sid = try openPollingSession(m)
        let p = port
        let poll = TestFuture.run { RawHTTP.request(port: p, "GET", "/socket.io/?EIO=4&transport=polling&sid=\(sid)") }
        XCTAssertEqual(post("\(m)?EIO=4&transport=polling&sid=\(sid)", "1").status, 200)
        let pollResponse = poll.wait()
        XCTAssertEqual(pollResponse?.status, 200)
        XCTAssertEqual(pollResponse?.text, "6")
        XCTAssertEqual(get("\(m)?EIO=4&transport=polling&sid=\(sid)").status, 400)
    }

    // "… › WebSocket › should forcefully close the session"
    func test_SIO_engine_close_websocket_should_forcefully_close_the_session() throws {
        let ws = try webSocket("\(m)?EIO=4&transport=websocket")
        _ = ws.receive()
        ws.send("1")
        assertCloses(ws)
    }

    // MARK: Engine.IO protocol / upgrade

    // "Engine.IO protocol › upgrade › should successfully upgrade from HTTP long-polling to WebSocket"
    func test_SIO_engine_upgrade_should_successfully_upgrade_from_HTTP_long_polling_to_WebSocket() throws {
        let sid = try openPollingSession(m)
        let ws = try webSocket("\(m)?EIO=4&transport=websocket&sid=\(sid)")
        XCTAssertEqual(ws.status, 101)
        ws.send("2probe")
        XCTAssertEqual(ws.receive(), .text("3probe"))
        ws.send("5")
        // The session now lives on the websocket: connect to `/` over it.
        ws.send("40")
        guard case .text(let reply) = ws.receiveSkippingPings() else { return XCTFail("no CONNECT reply") }
        XCTAssertTrue(reply.hasPrefix("40{"), reply)
    }

    /// Sends `2probe` and `5`, then proves the `5` was handled (a CONNECT round trip; the suite
    /// relies on timing here).
    func upgrade(_ ws: RawWebSocketClient) {
        ws.send("2probe")
        ws.send("5")
        XCTAssertEqual(ws.receive(), .text("3probe"))
        ws.send("40")
        guard case .text(let reply) = ws.receiveSkippingPings() else { return XCTFail("no CONNECT reply") }
        XCTAssertTrue(reply.hasPrefix("40{"), reply)
        XCTAssertEqual(ws.receiveSkippingPings(), .text("42[\"auth\",{}]"))
    }

    // "… › should ignore HTTP requests with same sid after upgrade"
    func test_SIO_engine_upgrade_should_ignore_HTTP_requests_with_same_sid_after_upgrade() throws {
        let sid = try openPollingSession(m)
        let ws = try webSocket("\(m)?EIO=4&transport=websocket&sid=\(sid)")
        upgrade(ws)
        XCTAssertEqual(get("\(m)?EIO=4&transport=polling&sid=\(sid)").status, 400)
    }

    // "… › should ignore WebSocket connection with same sid after upgrade"
    func test_SIO_engine_upgrade_should_ignore_WebSocket_connection_with_same_sid_after_upgrade() throws {
        let sid = try openPollingSession(m)
        let ws = try webSocket("\(m)?EIO=4&transport=websocket&sid=\(sid)")
        upgrade(ws)
        let second = try webSocket("\(m)?EIO=4&transport=websocket&sid=\(sid)")
        XCTAssertEqual(second.status, 101)
        assertCloses(second)
        ws.send("42[\"message\",\"still here\"]")
        XCTAssertEqual(ws.receiveSkippingPings(), .text("42[\"message-back\",\"still here\"]"))
    }

    // MARK: Socket.IO protocol / connect

    func connect(_ packet: String, expectPrefix: String, auth: String) throws {
        let ws = try webSocket("\(m)?EIO=4&transport=websocket")
        _ = ws.receive()
        ws.send(packet)
        guard case .text(let reply) = ws.receive() else { return XCTFail("no CONNECT reply") }
        XCTAssertTrue(reply.hasPrefix(expectPrefix), reply)
        let handshake = try JSONValue.parse(String(reply.dropFirst(expectPrefix.count)))
        XCTAssertEqual(Set(handshake.objectValue?.pairs.map(\.key) ?? []), ["sid"])
        XCTAssertNotNil(handshake["sid"]?.stringValue)
        XCTAssertEqual(ws.receive(), .text(auth), "the auth event is its own frame, right after the reply")
    }

    // "Socket.IO protocol › connect › should allow connection to the main namespace"
    func test_SIO_connect_should_allow_connection_to_the_main_namespace() throws {
        try connect("40", expectPrefix: "40", auth: "42[\"auth\",{}]")
    }

    // "… › should allow connection to the main namespace with a payload"
    func test_SIO_connect_should_allow_connection_to_the_main_namespace_with_a_payload() throws {
        try connect("40{\"token\":\"123\"}", expectPrefix: "40", auth: "42[\"auth\",{\"token\":\"123\"}]")
    }

    // "… › should allow connection to a custom namespace"
    func test_SIO_connect_should_allow_connection_to_a_custom_namespace() throws {
        try connect("40/custom,", expectPrefix: "40/custom,", auth: "42/custom,[\"auth\",{}]")
    }

    // "… › should allow connection to a custom namespace with a payload"
    func test_SIO_connect_should_allow_connection_to_a_custom_namespace_with_a_payload() throws {
        try connect("40/custom,{\"token\":\"abc\"}", expectPrefix: "40/custom,", auth: "42/custom,[\"auth\",{\"token\":\"abc\"}]")
    }

    // "… › should disallow connection to an unknown namespace"
    func test_SIO_connect_should_disallow_connection_to_an_unknown_namespace() throws {
        let ws = try webSocket("\(m)?EIO=4&transport=websocket")
        _ = ws.receive()
        ws.send("40/random")
        XCTAssertEqual(ws.receive(), .text("44/random,{\"message\":\"Invalid namespace\"}"))
    }

    // "… › should disallow connection with an invalid handshake"
    func test_SIO_connect_should_disallow_connection_with_an_invalid_handshake() throws {
        let ws = try webSocket("\(m)?EIO=4&transport=websocket")
        _ = ws.receive()
        ws.send("4abc")
        assertCloses(ws)
    }

    // "… › should close the connection if no handshake is received"
    func test_SIO_connect_should_close_the_connection_if_no_handshake_is_received() throws {
        let ws = try webSocket("\(m)?EIO=4&transport=websocket")
        assertCloses(ws)
    }

    // MARK: Socket.IO protocol / disconnect

    // "Socket.IO protocol › disconnect › should disconnect from the main namespace"
    func test_SIO_disconnect_should_disconnect_from_the_main_namespace() throws {
        let ws = try connectedSocket()
        ws.send("41")
        // Nothing answers the DISCONNECT; the next packet is the Engine.IO ping.
        XCTAssertEqual(ws.receive(), .text("2"))
    }

    // "… › should connect then disconnect from a custom namespace"
    func test_SIO_disconnect_should_connect_then_disconnect_from_a_custom_namespace() throws {
        let ws = try connectedSocket()
        XCTAssertEqual(ws.receive(), .text("2"))  // ping
        ws.send("3")
        ws.send("40/custom")
        guard case .text(let reply) = ws.receiveSkippingPings(), reply.hasPrefix("40/custom,") else { return XCTFail("no CONNECT reply") }
        XCTAssertEqual(ws.receiveSkippingPings(), .text("42/custom,[\"auth\",{}]"))
        ws.send("41/custom")
        ws.send("42[\"message\",\"message to main namespace\"]")
        XCTAssertEqual(ws.receiveSkippingPings(), .text("42[\"message-back\",\"message to main namespace\"]"))
    }

    // MARK: Socket.IO protocol / message

    // "Socket.IO protocol › message › should send a plain-text packet"
    func test_SIO_message_should_send_a_plain_text_packet() throws {
        let ws = try connectedSocket()
        ws.send("42[\"message\",1,\"2\",{\"3\":[true]}]")
        XCTAssertEqual(ws.receiveSkippingPings(), .text("42[\"message-back\",1,\"2\",{\"3\":[true]}]"))
    }

    // "… › should send a packet with binary attachments"
    func test_SIO_message_should_send_a_packet_with_binary_attachments() throws {
        let ws = try connectedSocket()
        ws.send("452-[\"message\",{\"_placeholder\":true,\"num\":0},{\"_placeholder\":true,\"num\":1}]")
        ws.send(binary: [1, 2, 3])
        ws.send(binary: [4, 5, 6])
        XCTAssertEqual(ws.receiveSkippingPings(), .text("452-[\"message-back\",{\"_placeholder\":true,\"num\":0},{\"_placeholder\":true,\"num\":1}]"))
        XCTAssertEqual(ws.receiveSkippingPings(), .binary([1, 2, 3]))
        XCTAssertEqual(ws.receiveSkippingPings(), .binary([4, 5, 6]))
    }

    // "… › should send a plain-text packet with an ack"
    func test_SIO_message_should_send_a_plain_text_packet_with_an_ack() throws {
        let ws = try connectedSocket()
        ws.send("42456[\"message-with-ack\",1,\"2\",{\"3\":[false]}]")
        XCTAssertEqual(ws.receiveSkippingPings(), .text("43456[1,\"2\",{\"3\":[false]}]"))
    }

    // "… › should send a packet with binary attachments and an ack"
    func test_SIO_message_should_send_a_packet_with_binary_attachments_and_an_ack() throws {
        let ws = try connectedSocket()
        ws.send("452-789[\"message-with-ack\",{\"_placeholder\":true,\"num\":0},{\"_placeholder\":true,\"num\":1}]")
        ws.send(binary: [1, 2, 3])
        ws.send(binary: [4, 5, 6])
        XCTAssertEqual(ws.receiveSkippingPings(), .text("462-789[{\"_placeholder\":true,\"num\":0},{\"_placeholder\":true,\"num\":1}]"))
        XCTAssertEqual(ws.receiveSkippingPings(), .binary([1, 2, 3]))
        XCTAssertEqual(ws.receiveSkippingPings(), .binary([4, 5, 6]))
    }

    // "… › should close the connection upon invalid format (unknown packet type)"
    func test_SIO_message_should_close_the_connection_upon_invalid_format_unknown_packet_type() throws {
        let ws = try connectedSocket()
        ws.send("4abc")
        assertCloses(ws)
    }

    // "… › should close the connection upon invalid format (invalid payload format)"
    func test_SIO_message_should_close_the_connection_upon_invalid_format_invalid_payload_format() throws {
        let ws = try connectedSocket()
        ws.send("42{}")
        assertCloses(ws)
    }

    // "… › should close the connection upon invalid format (invalid ack id)"
    func test_SIO_message_should_close_the_connection_upon_invalid_format_invalid_ack_id() throws {
        let ws = try connectedSocket()
        ws.send("42abc[\"message-with-ack\",1,\"2\",{\"3\":[false]}]")
        assertCloses(ws)
    }
}
