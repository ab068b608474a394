import TSTLS
import XCTest

/// The two bounds of `TLSHandshakeGate`: pending handshakes per address (from accept), handshakes
/// under way server-wide (from the first ClientHello byte). Over real sockets, with one address
/// holding silent connections while another completes 100 HTTPS requests:
/// conformance/test_tls_handshake_bound.py.
final class TLSHandshakeGateTests: XCTestCase {
    func testOneAddressFillsOnlyItsOwnShare() {
        let gate = TLSHandshakeGate(maxConcurrent: 100, maxPerAddress: 3)
        for _ in 0..<3 { XCTAssertTrue(gate.tryAdmit(address: "127.0.0.2")) }
        XCTAssertFalse(gate.tryAdmit(address: "127.0.0.2"), "past its share")
        XCTAssertTrue(gate.tryAdmit(address: "127.0.0.1"), "another address is admitted")
        XCTAssertEqual(gate.pending(from: "127.0.0.2"), 3)
        XCTAssertEqual(gate.current, 0, "silent connections hold no server-wide slot")
        gate.finish(address: "127.0.0.2", started: false)
        XCTAssertTrue(gate.tryAdmit(address: "127.0.0.2"), "a finished one frees its place")
    }

    func testTheServerWideBoundCountsOnlyStartedHandshakes() {
        let gate = TLSHandshakeGate(maxConcurrent: 2, maxPerAddress: 0)
        for i in 0..<50 { XCTAssertTrue(gate.tryAdmit(address: "10.0.0.\(i)")) }
        XCTAssertTrue(gate.tryStart())
        XCTAssertTrue(gate.tryStart())
        XCTAssertFalse(gate.tryStart())
        gate.finish(address: "10.0.0.0", started: true)
        XCTAssertEqual(gate.current, 1)
        XCTAssertTrue(gate.tryStart())
    }

    func testTheTableForgetsAddressesWithNothingPending() {
        let gate = TLSHandshakeGate(maxConcurrent: 0, maxPerAddress: 1)
        XCTAssertTrue(gate.tryAdmit(address: "a"))
        gate.finish(address: "a", started: false)
        XCTAssertEqual(gate.pending(from: "a"), 0)
        XCTAssertTrue(gate.tryAdmit(address: "a"))
    }
}
