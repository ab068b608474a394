#if canImport(CTLS)
import CTLS
import TSTLS
import XCTest

/// The pure engine: two engines (server from `TLSContext`, client from a verifying SSL_CTX of
/// the same shim) fed into each other over memory, no sockets.
final class TLSConnectionEngineTests: XCTestCase {
    var certs: TestCertificates!
    var context: TLSContext!

    override func setUpWithError() throws {
        certs = try TestCertificates()
        let pair = try certs.makeServerPair(name: "server")
        context = try TLSContext(certificateFile: pair.cert, privateKeyFile: pair.key)
    }

    private func handshake(maxVersion: Int32? = nil, chunk: Int = .max) throws -> (TLSConnectionEngine, TLSConnectionEngine, PumpResult) {
        let cctx = makeClientContext(caFile: certs.caFile, maxVersion: maxVersion)
        defer { SSL_CTX_free(cctx) }
        let client = try TLSConnectionEngine(clientContext: cctx, serverName: "localhost")
        let server = try TLSConnectionEngine(context: context)
        var result = PumpResult()
        pump(client: client, server: server, clientFirst: client.start(), chunk: chunk, into: &result)
        return (client, server, result)
    }

    private func summary(_ events: [TLSEngineAction]) -> TLSHandshakeSummary? {
        for case .handshakeCompleted(let s) in events { return s }
        return nil
    }

    func testTLS13HandshakeVerifiesAndNegotiatesHTTP11() throws {
        let (client, server, result) = try handshake()
        XCTAssertTrue(client.isHandshakeComplete)
        XCTAssertTrue(server.isHandshakeComplete)
        let s = try XCTUnwrap(summary(result.serverEvents), "\(result.serverEvents)")
        XCTAssertEqual(s.protocolVersion, "TLSv1.3")
        XCTAssertEqual(s.alpn, "http/1.1")
        XCTAssertTrue(TLSContext.intermediateCiphers13.contains(s.cipher), s.cipher)
        XCTAssertEqual(summary(result.clientEvents)?.alpn, "http/1.1")
    }

    func testApplicationDataBothWays() throws {
        let (client, server, _) = try handshake()
        var result = PumpResult()
        let request = Array("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)
        pump(client: client, server: server, clientFirst: client.encrypt(request), into: &result)
        XCTAssertEqual(result.serverPlaintext, request)
        let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 70000\r\n\r\n".utf8)
        let body = [UInt8](repeating: 0x61, count: 70_000)  // several records
        var back = PumpResult()
        pump(client: client, server: server, clientFirst: [], serverFirst: server.encrypt(head, body), into: &back)
        XCTAssertEqual(back.clientPlaintext, head + body)
    }

    func testTLS12IsAcceptedWithAnIntermediateCipher() throws {
        let (_, _, result) = try handshake(maxVersion: ts_tls1_2_version())
        let s = try XCTUnwrap(summary(result.serverEvents), "\(result.serverEvents)")
        XCTAssertEqual(s.protocolVersion, "TLSv1.2")
        XCTAssertTrue(TLSContext.intermediateCiphers12.split(separator: ":").contains(Substring(s.cipher)), s.cipher)
    }

    func testTLS11IsRefused() throws {
        let cctx = makeClientContext(caFile: certs.caFile)
        defer { SSL_CTX_free(cctx) }
        _ = ts_ssl_ctx_set_min_proto_version(cctx, 0x0301)
        _ = ts_ssl_ctx_set_max_proto_version(cctx, 0x0302)  // TLS 1.1 at most
        SSL_CTX_set_security_level(cctx, 0)
        let client = try TLSConnectionEngine(clientContext: cctx, serverName: "localhost")
        let server = try TLSConnectionEngine(context: context)
        var result = PumpResult()
        pump(client: client, server: server, clientFirst: client.start(), into: &result)
        XCTAssertFalse(server.isHandshakeComplete)
        XCTAssertTrue(result.serverEvents.contains { if case .failed = $0 { return true }; return false }, "\(result.serverEvents)")
    }

    func testTrickledHandshakeByteByByteCompletes() throws {
        // SSL_ERROR_WANT_READ after every byte must just wait for more.
        let (client, server, result) = try handshake(chunk: 1)
        XCTAssertTrue(client.isHandshakeComplete)
        XCTAssertTrue(server.isHandshakeComplete)
        XCTAssertFalse(result.serverEvents.contains { if case .failed = $0 { return true }; return false })
    }

    func testPlainHTTPIsDetectedFromTheFirstBytes() throws {
        let server = try TLSConnectionEngine(context: context)
        XCTAssertEqual(server.receive(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)), [.plainHTTPDetected(method: "GET")])
        XCTAssertTrue(server.isFinished)
        XCTAssertEqual(server.receive(Array("more".utf8)), [])
        let second = try TLSConnectionEngine(context: context)
        XCTAssertEqual(second.receive(Array("POS".utf8)), [.plainHTTPDetected(method: "POS")])
    }

    func testGarbageRecordFailsWithAnAlert() throws {
        let server = try TLSConnectionEngine(context: context)
        let actions = server.receive([0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00])
        guard case .failed(let why)? = actions.last else { return XCTFail("\(actions)") }
        XCTAssertTrue(why.contains("handshake"), why)
        XCTAssertTrue(server.isFinished)
    }

    func testClientRejectsCertificateFromAnotherCA() throws {
        let other = try TestCertificates()
        let cctx = makeClientContext(caFile: other.caFile)
        defer { SSL_CTX_free(cctx) }
        let client = try TLSConnectionEngine(clientContext: cctx, serverName: "localhost")
        let server = try TLSConnectionEngine(context: context)
        var result = PumpResult()
        pump(client: client, server: server, clientFirst: client.start(), into: &result)
        XCTAssertFalse(client.isHandshakeComplete)
        XCTAssertTrue(result.clientEvents.contains { if case .failed = $0 { return true }; return false }, "\(result.clientEvents)")
    }

    func testWritesBeforeTheHandshakeAreHeldThenSent() throws {
        let cctx = makeClientContext(caFile: certs.caFile)
        defer { SSL_CTX_free(cctx) }
        let client = try TLSConnectionEngine(clientContext: cctx, serverName: "localhost")
        let server = try TLSConnectionEngine(context: context)
        XCTAssertEqual(server.encrypt(Array("early".utf8)), [])
        var result = PumpResult()
        pump(client: client, server: server, clientFirst: client.start(), into: &result)
        XCTAssertEqual(result.clientPlaintext, Array("early".utf8))
    }

    func testCloseNotifyReachesThePeer() throws {
        let (client, server, _) = try handshake()
        var result = PumpResult()
        pump(client: client, server: server, clientFirst: client.shutdown(), into: &result)
        XCTAssertTrue(result.serverEvents.contains(.peerClosed), "\(result.serverEvents)")
        XCTAssertTrue(server.isFinished)
        XCTAssertFalse(server.shutdown().isEmpty, "the server answers with its own close_notify")
    }

    func testBrokenPairsThrowClearErrors() throws {
        let a = try certs.makeServerPair(name: "a")
        let b = try certs.makeServerPair(name: "b")
        XCTAssertThrowsError(try TLSContext(certificateFile: a.cert, privateKeyFile: b.key)) { error in
            XCTAssertTrue("\(error)".contains("does not match"), "\(error)")
        }
        XCTAssertThrowsError(try TLSContext(certificateFile: certs.directory + "/missing.pem", privateKeyFile: a.key)) { error in
            XCTAssertTrue("\(error)".contains("cannot read TLS certificate file"), "\(error)")
        }
        let junk = certs.directory + "/junk.pem"
        try "not a certificate\n".write(toFile: junk, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try TLSContext(certificateFile: junk, privateKeyFile: a.key)) { error in
            XCTAssertTrue("\(error)".contains("expected PEM"), "\(error)")
        }
    }
}
#endif
