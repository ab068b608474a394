#if canImport(CTLS)
import CTLS
@testable import TSTLS
import XCTest

/// Session resumption is on: a client that kept the ticket from a first connection
/// gets an abbreviated handshake on the next one (RFC 8446 §2.2, RFC 5077 for TLS 1.2).
final class TLSSessionResumptionTests: XCTestCase {
    func testTicketResumesTheSessionWithTLS13AndTLS12() throws {
        let certs = try TestCertificates()
        let pair = try certs.makeServerPair(name: "server")
        let context = try TLSContext(certificateFile: pair.cert, privateKeyFile: pair.key)
        for maxVersion in [nil, ts_tls1_2_version()] {
            let cctx = makeClientContext(caFile: certs.caFile, maxVersion: maxVersion)
            defer { SSL_CTX_free(cctx) }
            let first = try TLSConnectionEngine(clientContext: cctx, serverName: "localhost")
            let server1 = try TLSConnectionEngine(context: context)
            var r1 = PumpResult()
            pump(client: first, server: server1, clientFirst: first.start(), into: &r1)
            // Application data both ways so the client reads the post-handshake tickets (TLS 1.3).
            var r2 = PumpResult()
            pump(client: first, server: server1, clientFirst: first.encrypt([1]), serverFirst: server1.encrypt([2]), into: &r2)
            XCTAssertEqual(r2.clientPlaintext, [2])
            let session = try XCTUnwrap(SSL_get1_session(first.ssl), "the client holds a session to resume")
            defer { SSL_SESSION_free(session) }

            let second = try TLSConnectionEngine(clientContext: cctx, serverName: "localhost")
            XCTAssertEqual(SSL_set_session(second.ssl, session), 1)
            let server2 = try TLSConnectionEngine(context: context)
            var r3 = PumpResult()
            pump(client: second, server: server2, clientFirst: second.start(), into: &r3)
            var resumed: Bool?
            for case .handshakeCompleted(let s) in r3.serverEvents { resumed = s.resumed }
            XCTAssertEqual(resumed, true, "maxVersion \(String(describing: maxVersion)): \(r3.serverEvents)")
        }
    }
}
#endif
