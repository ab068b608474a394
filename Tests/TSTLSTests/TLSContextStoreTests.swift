#if canImport(CTLS)
import CTLS
import Foundation
import Logging
import TSTLS
import XCTest

/// Certificate rotation: a reload gives new connections the new pair, open
/// connections keep theirs, and a broken new pair is refused while the old one stays.
final class TLSContextStoreTests: XCTestCase {
    /// The refusals are expected here; keep them out of the test output.
    static var quietLogger: Logger {
        var l = Logger(label: "test")
        l.logLevel = .critical
        return l
    }

    func testReloadSwapsThePairAndKeepsOpenConnections() throws {
        let certs = try TestCertificates()
        let first = try certs.makeServerPair(name: "first", commonName: "localhost")
        let live = (cert: certs.directory + "/live.pem", key: certs.directory + "/live.key")
        try FileManager.default.copyItem(atPath: first.cert, toPath: live.cert)
        try FileManager.default.copyItem(atPath: first.key, toPath: live.key)
        let store = try TLSContextStore(certificateFile: live.cert, privateKeyFile: live.key, logger: Self.quietLogger)
        XCTAssertTrue(store.current.leafSummary.contains("CN=localhost") || store.current.leafSummary.contains("CN = localhost"), store.current.leafSummary)
        XCTAssertFalse(store.reloadIfChanged(), "nothing changed yet")

        // An open connection on the first pair.
        let cctx = makeClientContext(caFile: certs.caFile)
        defer { SSL_CTX_free(cctx) }
        let oldClient = try TLSConnectionEngine(clientContext: cctx, serverName: "localhost")
        let oldServer = try TLSConnectionEngine(context: store.current)
        var r = PumpResult()
        pump(client: oldClient, server: oldServer, clientFirst: oldClient.start(), into: &r)
        XCTAssertTrue(oldServer.isHandshakeComplete)

        // certbot-style renewal: new files in place (rename over the old ones).
        let second = try certs.makeServerPair(name: "second", commonName: "renewed.localhost")
        try replace(live.cert, with: second.cert)
        try replace(live.key, with: second.key)
        XCTAssertTrue(store.reloadIfChanged())
        XCTAssertEqual(store.generation, 2)
        XCTAssertTrue(store.current.leafSummary.contains("renewed.localhost"), store.current.leafSummary)

        // The open connection still works on its own context.
        var after = PumpResult()
        pump(client: oldClient, server: oldServer, clientFirst: oldClient.encrypt(Array("still here".utf8)), into: &after)
        XCTAssertEqual(after.serverPlaintext, Array("still here".utf8))

        // A new connection gets the new certificate (still for localhost via SAN, signed by the CA).
        let newClient = try TLSConnectionEngine(clientContext: cctx, serverName: "localhost")
        let newServer = try TLSConnectionEngine(context: store.current)
        var n = PumpResult()
        pump(client: newClient, server: newServer, clientFirst: newClient.start(), into: &n)
        XCTAssertTrue(newClient.isHandshakeComplete, "\(n.clientEvents)")

        // A broken pair (key of another certificate) is refused; the second pair stays.
        let third = try certs.makeServerPair(name: "third")
        try replace(live.key, with: third.key)
        XCTAssertFalse(store.reloadIfChanged())
        XCTAssertEqual(store.generation, 2)
        XCTAssertTrue(store.current.leafSummary.contains("renewed.localhost"))
        XCTAssertFalse(store.reloadIfChanged(), "a refused pair is reported once, not on every check")
        XCTAssertFalse(store.reload(reason: "SIGHUP"))
    }

    func testFirstLoadOfABrokenPairThrows() throws {
        let certs = try TestCertificates()
        let a = try certs.makeServerPair(name: "a")
        let b = try certs.makeServerPair(name: "b")
        XCTAssertThrowsError(try TLSContextStore(certificateFile: a.cert, privateKeyFile: b.key, logger: Self.quietLogger))
    }

    private func replace(_ path: String, with source: String) throws {
        let tmp = path + ".new"
        try? FileManager.default.removeItem(atPath: tmp)
        try FileManager.default.copyItem(atPath: source, toPath: tmp)
        XCTAssertEqual(rename(tmp, path), 0)
    }
}
#endif
