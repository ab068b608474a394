import TSHTTP
import TSJSON
@testable import TSRoutes
@testable import TSInspector
import XCTest

/// Protected mode as pure decisions: who is "this machine" (`LocalOnly`), the inspector's rule
/// (`InspectorAccess.decide`) and `/metrics`' (`MetricsAccess.decide`), over the TCP peer address,
/// the forwarding headers, the token and the settings. The same rules over real sockets from a
/// non-loopback address: conformance/test_protected_mode.py.
final class ProtectedModeTests: XCTestCase {
    let proxies = try! TrustedProxies(["127.0.0.1", "10.9.0.0/16"])

    func local(_ peer: String, xff: String? = nil, realIP: String? = nil, forwarded: String? = nil,
               trusted: TrustedProxies = .none) -> LocalOnly.Decision {
        LocalOnly.decide(peer: peer, forwardedFor: xff, realIP: realIP, forwarded: forwarded, trustedProxies: trusted)
    }

    func testLoopbackPeersAreLocalWhateverTheirPort() {
        for peer in ["127.0.0.1:5123", "127.0.0.2:80", "127.255.0.9:1", "[::1]:4000", "::1", "[::ffff:127.0.0.1]:9"] {
            XCTAssertEqual(local(peer), .local, peer)
        }
    }

    func testOtherPeersAreRemote() {
        XCTAssertEqual(local("10.201.0.2:40000"), .remotePeer("10.201.0.2"))
        XCTAssertEqual(local("[2001:db8::7]:443"), .remotePeer("[2001:db8::7]"))
        XCTAssertEqual(local("[::ffff:192.0.2.1]:1"), .remotePeer("[::ffff:192.0.2.1]"))
        XCTAssertEqual(local("128.0.0.1:1"), .remotePeer("128.0.0.1"))
        XCTAssertEqual(local(""), .remotePeer(""), "an address that cannot be read is not local")
    }

    func testAForwardingHeaderFromARemotePeerDoesNotMakeItLocal() {
        XCTAssertEqual(local("10.201.0.2:1", xff: "127.0.0.1"), .remotePeer("10.201.0.2"))
        XCTAssertEqual(local("10.9.0.5:1", xff: "127.0.0.1", trusted: proxies), .remotePeer("10.9.0.5"),
                       "the TCP peer must be loopback even when it is a trusted proxy")
    }

    func testATrustedLocalProxyForwardingForARemoteClientIsRefused() {
        XCTAssertEqual(local("127.0.0.1:1", xff: "203.0.113.9", trusted: proxies), .forwarded("203.0.113.9"))
        XCTAssertEqual(local("127.0.0.1:1", xff: "127.0.0.1", trusted: proxies), .local, "a local client through the local proxy")
        XCTAssertEqual(local("127.0.0.1:1", trusted: proxies), .local, "the proxy's own request")
        // The right-most untrusted hop is the client; what it claimed left of that is ignored.
        XCTAssertEqual(local("127.0.0.1:1", xff: "127.0.0.1, 198.51.100.4", trusted: proxies), .forwarded("198.51.100.4"))
        XCTAssertEqual(local("127.0.0.1:1", xff: "198.51.100.4, 127.0.0.1", trusted: proxies), .forwarded("198.51.100.4"))
        XCTAssertEqual(local("127.0.0.1:1", realIP: "198.51.100.5", trusted: proxies), .forwarded("198.51.100.5"),
                       "a trusted proxy that sends only X-Real-IP")
    }

    func testAnUntrustedLocalProxyCannotMakeEveryVisitorLocal() {
        XCTAssertEqual(local("127.0.0.1:1", xff: "198.51.100.4"), .forwarded("198.51.100.4"))
        XCTAssertEqual(local("127.0.0.1:1", realIP: "198.51.100.5"), .forwarded("198.51.100.5"))
        XCTAssertEqual(local("127.0.0.1:1", forwarded: "for=\"[2001:db8::1]:443\";proto=https"), .forwarded("[2001:db8::1]"))
        XCTAssertEqual(local("127.0.0.1:1", forwarded: "for=unknown"), .local, "no address named")
        XCTAssertEqual(local("127.0.0.1:1", xff: "127.0.0.1, ::1"), .local)
    }

    func testInspectorWithoutATokenAnswersOnlyLocalRequestsToALocalHost() {
        XCTAssertEqual(InspectorAccess.decide(adminToken: nil, presentedToken: nil, local: .local, host: "127.0.0.1:3000"), .allowed)
        XCTAssertEqual(InspectorAccess.decide(adminToken: nil, presentedToken: nil, local: .remotePeer("10.201.0.2"), host: "10.201.0.1:3000"),
                       .notLocal(.remotePeer("10.201.0.2")))
        XCTAssertEqual(InspectorAccess.decide(adminToken: nil, presentedToken: "anything", local: .forwarded("203.0.113.9"), host: nil),
                       .notLocal(.forwarded("203.0.113.9")), "a token opens nothing when none is configured")
        XCTAssertEqual(InspectorAccess.decide(adminToken: nil, presentedToken: nil, local: .local, host: "evil.example"),
                       .foreignHost("evil.example"), "DNS-rebinding protection stays for local requests")
    }

    func testInspectorWithATokenAnswersItFromAnywhere() {
        XCTAssertEqual(InspectorAccess.decide(adminToken: "s3cret", presentedToken: "s3cret", local: .remotePeer("10.201.0.2"), host: "x"), .allowed)
        XCTAssertEqual(InspectorAccess.decide(adminToken: "s3cret", presentedToken: "wrong", local: .local, host: "127.0.0.1"), .unauthorized)
        XCTAssertEqual(InspectorAccess.decide(adminToken: "s3cret", presentedToken: nil, local: .local, host: "127.0.0.1"), .unauthorized)
    }

    func testTheRefusalSaysHowToOpenTheInspector() {
        let message = InspectorAccess.notLocalMessage(.remotePeer("10.201.0.2"))
        XCTAssertTrue(message.contains("inspector.adminToken"), message)
        XCTAssertTrue(message.contains("TOUCHSYNC_INSPECTOR_ADMIN_TOKEN"), message)
        XCTAssertTrue(message.contains("10.201.0.2"), message)
    }

    func testMetricsRule() throws {
        let allow = try AddressRanges(["10.201.0.0/30", "2001:db8::/32", "192.0.2.7"])
        func decide(_ local: LocalOnly.Decision, _ client: String, token presented: String? = nil, configured: String? = nil) -> MetricsAccess.Decision {
            MetricsAccess.decide(local: local, client: client, presentedToken: presented, allowFrom: allow, token: configured)
        }
        XCTAssertEqual(decide(.local, "127.0.0.1:9"), .allowed)
        XCTAssertEqual(decide(.remotePeer("10.201.0.2"), "10.201.0.2:5000"), .allowed, "in metrics.allowFrom")
        XCTAssertEqual(decide(.remotePeer("10.201.0.5"), "10.201.0.5:5000"), .refused(.remotePeer("10.201.0.5")), "outside the /30")
        XCTAssertEqual(decide(.remotePeer("[2001:db8:1::9]"), "[2001:db8:1::9]:1"), .allowed)
        XCTAssertEqual(decide(.remotePeer("[2001:db9::9]"), "[2001:db9::9]:1"), .refused(.remotePeer("[2001:db9::9]")))
        XCTAssertEqual(decide(.remotePeer("198.51.100.1"), "198.51.100.1:1", token: "t0k", configured: "t0k"), .allowed)
        XCTAssertEqual(decide(.local, "127.0.0.1:1", token: "nope", configured: "t0k"), .wrongToken)
        XCTAssertEqual(decide(.remotePeer("198.51.100.1"), "198.51.100.1:1", token: "t0k"), .wrongToken, "no token configured")
        XCTAssertEqual(decide(.local, "127.0.0.1:1", token: "an-app-token"), .allowed, "no token configured: this machine still may")
        XCTAssertTrue(MetricsAccess.refusedMessage(.refused(.remotePeer("198.51.100.1"))).contains("metrics.allowFrom"))
    }

    /// With TOUCHSYNC_ENV=production loopback is no credential (a proxy on the same host connects
    /// from it); outside production a local request must name localhost or an IP (DNS rebinding).
    func testMetricsRuleInProductionAndTheHostCheck() throws {
        let allow = try AddressRanges(["127.0.0.1"])
        func decide(_ local: LocalOnly.Decision, _ client: String, token presented: String? = nil, configured: String? = nil,
                    allowFrom: AddressRanges = .none, production: Bool, host: String? = "127.0.0.1:3000") -> MetricsAccess.Decision {
            MetricsAccess.decide(local: local, client: client, presentedToken: presented, allowFrom: allowFrom, token: configured,
                                 production: production, host: host)
        }
        XCTAssertEqual(decide(.local, "127.0.0.1:9", production: true), .needsCredential)
        XCTAssertEqual(decide(.local, "127.0.0.1:9", token: "t0k", configured: "t0k", production: true), .allowed)
        XCTAssertEqual(decide(.local, "127.0.0.1:9", token: "x", production: true), .wrongToken)
        XCTAssertEqual(decide(.local, "127.0.0.1:9", allowFrom: allow, production: true), .allowed, "allowFrom names loopback explicitly")
        XCTAssertEqual(decide(.local, "127.0.0.1:9", production: false, host: "rebind.example:3000"), .foreignHost("rebind.example:3000"))
        XCTAssertEqual(decide(.local, "127.0.0.1:9", production: false, host: "localhost:3000"), .allowed)
        XCTAssertEqual(decide(.local, "127.0.0.1:9", token: "t0k", configured: "t0k", production: false, host: "metrics.example"), .allowed)
        XCTAssertTrue(MetricsAccess.refusedMessage(.needsCredential).contains("metrics.token"))
    }

    /// Test mode: protected mode without a token, the token from anywhere with one, the header on
    /// every change, and no other site's Origin in either case.
    func testTestModeRule() {
        func decide(token: String? = nil, presented: String? = nil, changes: Bool = true, local: LocalOnly.Decision = .local,
                    host: String? = "127.0.0.1:3000", origin: String? = nil) -> TestModeAccess.Decision {
            TestModeAccess.decide(token: token, presented: presented, changes: changes, local: local, host: host, origin: origin)
        }
        XCTAssertEqual(decide(presented: "1"), .allowed)
        XCTAssertEqual(decide(), .missingHeader, "a change without X-TouchSync-Test (what a cross-site form or text/plain POST is)")
        XCTAssertEqual(decide(changes: false), .allowed, "a read from this machine needs no header")
        XCTAssertEqual(decide(presented: "1", local: .remotePeer("10.200.0.2")), .notLocal(.remotePeer("10.200.0.2")))
        XCTAssertEqual(decide(presented: "1", local: .forwarded("203.0.113.9")), .notLocal(.forwarded("203.0.113.9")))
        XCTAssertEqual(decide(presented: "1", host: "rebind.example:3000"), .foreignHost("rebind.example:3000"))
        XCTAssertEqual(decide(presented: "1", origin: "https://evil.example"), .crossSite("https://evil.example"))
        XCTAssertEqual(decide(presented: "1", origin: "null"), .crossSite("null"))
        XCTAssertEqual(decide(presented: "1", origin: "http://localhost:5173"), .allowed)
        XCTAssertEqual(decide(presented: "1", origin: "http://127.0.0.1:3000"), .allowed)
        XCTAssertEqual(decide(presented: "1", origin: "http://[::1]:3000"), .allowed)
        XCTAssertEqual(decide(token: "s3cret", presented: "s3cret", local: .remotePeer("10.200.0.2"), host: "touchsync:3000"), .allowed)
        XCTAssertEqual(decide(token: "s3cret", presented: "1", local: .remotePeer("10.200.0.2")), .wrongToken)
        XCTAssertEqual(decide(token: "s3cret", changes: false, local: .local), .wrongToken, "with a token, reads need it too")
        XCTAssertEqual(decide(token: "s3cret", presented: "s3cret", host: "ci.example", origin: "https://evil.example"), .crossSite("https://evil.example"))
        XCTAssertEqual(decide(token: "s3cret", presented: "s3cret", host: "ci.example:3000", origin: "http://ci.example:3000"), .allowed)
    }

    func testAddressRangesParseIPv4AndIPv6() throws {
        let r = try AddressRanges(["10.0.0.0/8", "::1", "fe80::/10", "2001:db8:0:0:0:0:0:5", "::ffff:192.0.2.0/120"])
        XCTAssertTrue(r.contains("10.255.1.2"))
        XCTAssertTrue(r.contains("::ffff:10.1.2.3"), "IPv4-mapped matches the IPv4 range")
        XCTAssertTrue(r.contains("[::1]"))
        XCTAssertTrue(r.contains("fe80::1%eth0"))
        XCTAssertTrue(r.contains("2001:db8::5"))
        XCTAssertFalse(r.contains("2001:db8::6"))
        XCTAssertTrue(r.contains("192.0.2.200"))
        XCTAssertFalse(r.contains("11.0.0.1"))
        XCTAssertFalse(r.contains("not-an-address"))
        for bad in ["10.0.0.0/33", "::/129", "2001:db8::1::2", "300.1.1.1", "host.example", "10.0.0.0/x", "1:2:3:4:5:6:7:8:9"] {
            XCTAssertThrowsError(try AddressRanges([bad]), bad)
        }
    }

    func testABadMetricsAllowFromEntryStopsTheStartNamingIt() async throws {
        do {
            let live = try LiveServer(overrides: ["metrics.allowFrom": ["10.0.0.0/8", "10.0.0.0/40"]])
            await live.stop()
            XCTFail("a server started with metrics.allowFrom 10.0.0.0/40")
        } catch {
            XCTAssertTrue("\(error)".contains("metrics.allowFrom") && "\(error)".contains("10.0.0.0/40"), "\(error)")
        }
    }
}
