import Foundation
import TSSockets

/// Turns a Redis host name into a numeric address for `Connection.connect`. getaddrinfo(3)
/// blocks, so a name is resolved on a short-lived detached thread of its own ("ts-redis-dns"),
/// which hands the answer to the event loop and ends; nothing waits for (joins) it, so no event
/// loop and no task of the cooperative pool ever blocks on the lookup. A numeric address (or
/// `localhost`) is answered at once.
enum RedisHostResolver {
    /// Calls `completion` on `loop` with the first IPv4 (else IPv6) address of `host`, or an error text.
    static func resolve(_ host: String, on loop: EventLoop, _ completion: @escaping @Sendable (Result<String, ResolveError>) -> Void) {
        if host == "localhost" || (try? SocketAddress(host: host, port: 0)) != nil {
            return completion(.success(host))
        }
        do {
            try SpawnedThread.detach(name: "ts-redis-dns") {
                let answer = lookup(host)
                loop.execute { completion(answer) }
            }
        } catch {
            completion(.failure(ResolveError(description: "cannot resolve \(host): \(error)")))
        }
    }

    struct ResolveError: Error, CustomStringConvertible, Sendable {
        let description: String
    }

    private static func lookup(_ host: String) -> Result<String, ResolveError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, nil, &hints, &list)
        guard rc == 0, let first = list else {
            return .failure(ResolveError(description: "cannot resolve \(host): \(String(cString: gai_strerror(rc)))"))
        }
        defer { freeaddrinfo(first) }
        var v6: String?
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let ai = cursor {
            if let addr = ai.pointee.ai_addr, let text = SocketAddress.numericHost(UnsafeRawPointer(addr)) {
                if ai.pointee.ai_family == AF_INET { return .success(text) }
                if v6 == nil { v6 = text }
            }
            cursor = ai.pointee.ai_next
        }
        if let v6 { return .success(v6) }
        return .failure(ResolveError(description: "cannot resolve \(host): no IPv4 or IPv6 address"))
    }
}
