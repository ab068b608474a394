#if canImport(CTLS)
import CTLS
import Foundation
import TSTLS
import XCTest

/// `touchsync cert`'s CA and server certificate (made with libcrypto, no CLI): the server loads
/// the pair, and a client trusting only the CA verifies it for each name and address.
final class LocalCertificateAuthorityTests: XCTestCase {
    func testCreatesACAAndAServerCertificateAClientVerifies() throws {
        let dir = NSTemporaryDirectory() + "touchsync-cert-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let result = try LocalCertificateAuthority.create(in: dir, names: ["localhost", "devbox.local"], addresses: ["127.0.0.1", "192.168.7.9"])
        XCTAssertTrue(result.createdCA)
        XCTAssertTrue(result.createdServerCertificate)
        let keyMode = try FileManager.default.attributesOfItem(atPath: result.files.serverKey)[.posixPermissions] as? Int
        XCTAssertEqual(keyMode, 0o600)
        let context = try TLSContext(certificateFile: result.files.serverCertificate, privateKeyFile: result.files.serverKey)

        for name in ["localhost", "devbox.local", "127.0.0.1", "192.168.7.9"] {
            let cctx = makeClientContext(caFile: result.files.caCertificate)
            defer { SSL_CTX_free(cctx) }
            let client = try TLSConnectionEngine(clientContext: cctx, serverName: name)
            let server = try TLSConnectionEngine(context: context)
            var r = PumpResult()
            pump(client: client, server: server, clientFirst: client.start(), into: &r)
            XCTAssertTrue(client.isHandshakeComplete, "\(name): \(r.clientEvents)")
        }
        // Not a name in the certificate: refused.
        let cctx = makeClientContext(caFile: result.files.caCertificate)
        defer { SSL_CTX_free(cctx) }
        let client = try TLSConnectionEngine(clientContext: cctx, serverName: "elsewhere.example")
        let server = try TLSConnectionEngine(context: context)
        var r = PumpResult()
        pump(client: client, server: server, clientFirst: client.start(), into: &r)
        XCTAssertFalse(client.isHandshakeComplete)

        // Once: a second run keeps both; renewing keeps the CA.
        let caBefore = try String(contentsOfFile: result.files.caCertificate, encoding: .utf8)
        let again = try LocalCertificateAuthority.create(in: dir, names: ["localhost"], addresses: ["127.0.0.1"])
        XCTAssertFalse(again.createdCA)
        XCTAssertFalse(again.createdServerCertificate)
        let renewed = try LocalCertificateAuthority.create(in: dir, names: ["localhost"], addresses: ["127.0.0.1"], renewServer: true)
        XCTAssertFalse(renewed.createdCA)
        XCTAssertTrue(renewed.createdServerCertificate)
        XCTAssertEqual(try String(contentsOfFile: result.files.caCertificate, encoding: .utf8), caBefore)
    }
}
#endif
