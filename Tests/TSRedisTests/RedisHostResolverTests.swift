import Foundation
import TSSockets
import XCTest
@testable import TSRedis

/// Host names (e.g. `redis://redis:6379` in docker-compose) are resolved off the loop and the
/// answer comes back on it; a name that cannot resolve is an error with the name in it.
final class RedisHostResolverTests: XCTestCase {
    func resolve(_ host: String, on loop: EventLoop) async -> (Result<String, RedisHostResolver.ResolveError>, Bool) {
        await withCheckedContinuation { cont in
            loop.execute {
                RedisHostResolver.resolve(host, on: loop) { result in cont.resume(returning: (result, loop.inEventLoop)) }
            }
        }
    }

    func testNamesResolveOffTheLoopAndFailuresSayWhich() async throws {
        let loop = try EventLoop()
        defer { loop.shutdown() }
        let (numeric, _) = await resolve("127.0.0.1", on: loop)
        XCTAssertEqual(try numeric.get(), "127.0.0.1")
        let (invalid, onLoop) = await resolve("no-such-host.invalid", on: loop)  // RFC 6761 §6.4: never resolves
        XCTAssertTrue(onLoop, "the answer comes back on the loop")
        XCTAssertThrowsError(try invalid.get()) { XCTAssertTrue("\($0)".contains("no-such-host.invalid"), "\($0)") }

        // A name of /etc/hosts other than localhost that maps to a loopback address, if there is one.
        let hosts = (try? String(contentsOfFile: "/etc/hosts", encoding: .utf8)) ?? ""
        let name = hosts.split(separator: "\n").compactMap { line -> String? in
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard f.count >= 2, f[0] == "127.0.0.1", !f[0].hasPrefix("#") else { return nil }
            return f.dropFirst().map(String.init).first { $0 != "localhost" && !$0.hasPrefix("#") }
        }.first
        guard let name else { throw XCTSkip("SKIPPED (name resolution): /etc/hosts names no loopback host besides localhost") }
        let (named, namedOnLoop) = await resolve(name, on: loop)
        XCTAssertTrue(namedOnLoop)
        XCTAssertEqual(try named.get(), "127.0.0.1", name)
    }
}
