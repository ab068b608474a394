import XCTest
@testable import TSSockets

/// `Connection.connect(source:)`: a client connection from a chosen local address, which a load
/// generator uses to hold more connections to one server than one address has ephemeral ports.
final class ConnectionConnectTests: XCTestCase {
    /// The listener sees the connection come from the source address asked for (Linux routes all
    /// of 127.0.0.0/8 to the loopback interface, so 127.0.0.2 needs no set-up there).
    func testTheServerSeesTheChosenSourceAddress() throws {
        if Platform.defaultPoller == .kqueue {
            throw XCTSkip("127.0.0.2 is local on Linux; macOS's lo0 has only 127.0.0.1 unless an alias is added")
        }
        let group = try EventLoopGroup(count: 1)
        defer { group.shutdown() }
        let peers = LockedValue<[String]>([])
        let accepted = expectation(description: "accepted")
        let listener = TCPListener(host: "127.0.0.1", port: 0, group: group) { connection in
            peers.withLock { $0.append(connection.remoteAddress) }
            accepted.fulfill()
            return SilentHandler()
        }
        let port = try listener.start()
        defer { listener.stop() }
        let loop = try EventLoop()
        defer { loop.shutdown() }
        let error: String? = loop.submitAndWait {
            do {
                _ = try Connection.connect(host: "127.0.0.1", port: port, on: loop, id: 1, source: "127.0.0.2") { _ in SilentHandler() }
                return nil
            } catch { return "\(error)" }
        }
        XCTAssertNil(error)
        wait(for: [accepted], timeout: 10)
        XCTAssertEqual(peers.current.count, 1)
        XCTAssertTrue(peers.current[0].hasPrefix("127.0.0.2:"), "the listener saw \(peers.current)")
    }

    /// A source address this machine does not have is refused at bind(2), before any packet.
    func testASourceAddressThatIsNotLocalIsRefused() throws {
        let loop = try EventLoop()
        defer { loop.shutdown() }
        let error: String? = loop.submitAndWait {
            do {
                _ = try Connection.connect(host: "127.0.0.1", port: 9, on: loop, id: 1, source: "192.0.2.1") { _ in SilentHandler() }
                return nil
            } catch { return "\(error)" }
        }
        XCTAssertNotNil(error, "binding to 192.0.2.1 (TEST-NET-1, RFC 5737) must fail")
        XCTAssertTrue(error?.contains("bind") ?? false, "\(error ?? "")")
    }
}

private final class SilentHandler: ConnectionHandler {
    func connectionDidRead(_ connection: Connection, _ bytes: UnsafeRawBufferPointer) {}
    func connectionDidClose(_ connection: Connection, reason: CloseReason) {}
}
