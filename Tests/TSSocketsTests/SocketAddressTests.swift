import Foundation
@testable import TSSockets
import XCTest

/// The text of a socket address: what an accepted connection reports as its peer ("ip:port",
/// "[ip]:port" for IPv6, RFC 3986 §3.2.2's bracketed form) and what a resolver hands on (the
/// numeric host alone).
final class SocketAddressTests: XCTestCase {
    /// The address as an accepted connection's `sockaddr_storage` holds it.
    private func storage(_ address: SocketAddress) -> sockaddr_storage {
        var s = sockaddr_storage()
        withUnsafeMutableBytes(of: &s) { dst in
            address.withSockAddr { p, len in dst.copyMemory(from: UnsafeRawBufferPointer(start: p, count: Int(len))) }
        }
        return s
    }

    func testPeerTextIsHostAndPortWithIPv6InBrackets() throws {
        XCTAssertEqual(SocketAddress.describe(storage(try SocketAddress(host: "127.0.0.1", port: 5555))), "127.0.0.1:5555")
        XCTAssertEqual(SocketAddress.describe(storage(try SocketAddress(host: "::1", port: 443))), "[::1]:443")
        XCTAssertEqual(SocketAddress.describe(storage(try SocketAddress(host: "fd00::1:2", port: 0))), "[fd00::1:2]:0")
        XCTAssertEqual(SocketAddress.describe(sockaddr_storage()), "unknown", "a family that is neither IPv4 nor IPv6")
    }

    func testNumericHostIsTheAddressAlone() throws {
        for (host, expected) in [("10.1.2.3", "10.1.2.3"), ("::1", "::1"), ("[fd00::1]", "fd00::1"), ("localhost", "127.0.0.1")] {
            let text = try SocketAddress(host: host, port: 80).withSockAddr { p, _ in SocketAddress.numericHost(UnsafeRawPointer(p)) }
            XCTAssertEqual(text, expected, host)
        }
        var none = sockaddr_storage()
        XCTAssertNil(withUnsafeBytes(of: &none) { SocketAddress.numericHost($0.baseAddress!) })
    }
}
