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
            if let addr = ai.pointee.ai_addr {
                var buf = [CChar](repeating: 0, count: 64)
                if ai.pointee.ai_family == AF_INET {
                    var a = addr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                    if inet_ntop(AF_INET, &a, &buf, socklen_t(buf.count)) != nil { return .success(Self.text(buf)) }
                } else if ai.pointee.ai_family == AF_INET6, v6 == nil {
                    var a = addr.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                    if inet_ntop(AF_INET6, &a, &buf, socklen_t(buf.count)) != nil { v6 = Self.text(buf) }
                }
            }
            cursor = ai.pointee.ai_next
        }
        if let v6 { return .success(v6) }
        return .failure(ResolveError(description: "cannot resolve \(host): no IPv4 or IPv6 address"))
    }

    /// The text `inet_ntop` wrote into `buf`: the bytes before its terminating NUL.
    private static func text(_ buf: [CChar]) -> String {
        String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
