
/// An IPv4 or IPv6 socket address parsed from a numeric host (or `localhost`).
public struct SocketAddress: Sendable {
    private enum Storage: Sendable {
        case v4(sockaddr_in)
        case v6(sockaddr_in6)
    }
    private let storage: Storage

    public var isIPv6: Bool { if case .v6 = storage { return true } else { return false } }

    /// Parses a numeric IPv4/IPv6 host (`"127.0.0.1"`, `"0.0.0.0"`, `"::1"`, `"::"`) or `"localhost"`.
    public init(host: String, port: Int) throws {
        guard (0...65535).contains(port) else { throw SocketError(syscall: "bind", errno: EINVAL) }
        let h = host == "localhost" ? "127.0.0.1" : host
        var v4 = Platform.makeIPv4Address(port: UInt16(port))
        if inet_pton(AF_INET, h, &v4.sin_addr) == 1 {
            storage = .v4(v4)
            return
        }
        var v6 = Platform.makeIPv6Address(port: UInt16(port))
        let stripped = h.hasPrefix("[") && h.hasSuffix("]") ? String(h.dropFirst().dropLast()) : h
        if inet_pton(AF_INET6, stripped, &v6.sin6_addr) == 1 {
            storage = .v6(v6)
            return
        }
        throw SocketError(syscall: "inet_pton", errno: EINVAL)
    }

    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        switch storage {
        case .v4(var a):
            return withUnsafePointer(to: &a) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .v6(var a):
            return withUnsafePointer(to: &a) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
    }

    static func port(of storage: sockaddr_storage) -> Int {
        var s = storage
        return withUnsafePointer(to: &s) { p -> Int in
            switch Int32(storage.ss_family) {
            case AF_INET:
                return p.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            case AF_INET6:
                return p.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            default:
                return 0
            }
        }
    }

    /// "ip:port" for IPv4, "[ip]:port" for IPv6.
    static func describe(_ storage: sockaddr_storage) -> String {
        var s = storage
        let host = withUnsafePointer(to: &s) { numericHost(UnsafeRawPointer($0)) }
        guard let host else { return "unknown" }
        let port = String(port(of: storage))
        return Int32(storage.ss_family) == AF_INET6 ? "[" + host + "]:" + port : host + ":" + port
    }

    /// The numeric text of the IPv4 or IPv6 address at `addr` (a `sockaddr`, e.g. getaddrinfo(3)'s
    /// `ai_addr`; raw, so no C type crosses this module's interface), by inet_ntop(3); nil for any
    /// other family.
    public static func numericHost(_ addr: UnsafeRawPointer) -> String? {
        var buf = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(addr.load(as: sockaddr.self).sa_family) {
        case AF_INET:
            var a = addr.load(as: sockaddr_in.self).sin_addr
            guard inet_ntop(AF_INET, &a, &buf, socklen_t(buf.count)) != nil else { return nil }
        case AF_INET6:
            var a = addr.load(as: sockaddr_in6.self).sin6_addr
            guard inet_ntop(AF_INET6, &a, &buf, socklen_t(buf.count)) != nil else { return nil }
        default:
            return nil
        }
        return cString(buf)
    }
}

private func cString(_ buf: [CChar]) -> String {
    let bytes = buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}
