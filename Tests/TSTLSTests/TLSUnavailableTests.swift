#if !canImport(CTLS)
import XCTest

/// A build without libssl (macOS: its SDK has no OpenSSL, and CTLS is linked on Linux only, see
/// Package.swift) compiles every other test in this target out. This one says so in the test
/// report, instead of leaving the TLS tests out without a word.
final class TLSUnavailableTests: XCTestCase {
    func testTLSTestsNeedLibssl() throws {
        throw XCTSkip("SKIPPED (TLS): this build has no TLS (libssl is linked on Linux only; the macOS SDK has no "
                      + "OpenSSL), so the TLS engine and its tests are compiled out")
    }
}
#endif
