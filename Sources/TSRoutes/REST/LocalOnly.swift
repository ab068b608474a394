import TSHTTP

/// "Protected mode" of the operator surfaces (the inspector without `inspector.adminToken`,
/// `/metrics` without `metrics.allowFrom`/`metrics.token`): a request is local when its **TCP
/// peer** is a loopback address and it was not forwarded for someone else by a proxy on this host.
///
/// The peer address is the one the kernel reports for the connection, not anything the client
/// wrote, so a server started with `--host 0.0.0.0` and no token still answers nobody but its
/// own machine. A proxy on the same host (nginx, a tunnel) connects from loopback too, and then
/// the request's forwarding headers say whose it is:
/// - the peer is in `server.trustedProxies`: the client is the address `TrustedProxies` attributes
///   the request to (right-most untrusted `X-Forwarded-For` entry); local only if that is loopback;
/// - in any case, an `X-Real-IP` or `Forwarded: for=` naming a non-loopback address refuses the
///   request (a proxy configured to send only those), and so does any `X-Forwarded-For` entry when
///   the peer is not a trusted proxy. A local client forging one only refuses itself; an
///   unconfigured local proxy cannot make every visitor look local.
public enum LocalOnly {
    public enum Decision: Equatable, Sendable {
        case local
        /// The TCP peer is not a loopback address.
        case remotePeer(String)
        /// The peer is a local proxy that forwarded the request for this (non-loopback) client.
        case forwarded(String)

        /// Where the request came from, for a refusal's message.
        public var origin: String {
            switch self {
            case .local: return "this machine"
            case .remotePeer(let peer): return "a request from \(peer)"
            case .forwarded(let client): return "a request forwarded for \(client)"
            }
        }
    }

    /// The decision for a request from `peer` (IP, with or without port) carrying these headers.
    public static func decide(peer: String, forwardedFor: String?, realIP: String?, forwarded: String?,
                              trustedProxies: TrustedProxies) -> Decision {
        let host = TrustedProxies.hostOnly(peer)
        guard isLoopback(host) else { return .remotePeer(host) }
        var forwardedFor = forwardedFor
        if trustedProxies.contains(host), let header = forwardedFor {
            let client = trustedProxies.clientAddress(peer: host, forwardedFor: header)
            if !isLoopback(client) { return .forwarded(client) }
            forwardedFor = nil  // what the client claimed left of it is not believed, for or against
        }
        for claimed in claimedClients(forwardedFor: forwardedFor, realIP: realIP, forwarded: forwarded) where !isLoopback(claimed) {
            return .forwarded(claimed)
        }
        return .local
    }

    public static func decide(_ request: HTTPRequest, trustedProxies: TrustedProxies) -> Decision {
        decide(peer: request.remoteAddress, forwardedFor: request.header("X-Forwarded-For"), realIP: request.header("X-Real-IP"),
               forwarded: request.header("Forwarded"), trustedProxies: trustedProxies)
    }

    /// 127.0.0.0/8, `::1`, `::ffff:127.x.y.z`. Anything unparsable (a Unix socket's empty address) is not loopback.
    public static func isLoopback(_ address: String) -> Bool {
        IPAddress(Substring(TrustedProxies.hostOnly(address)))?.isLoopback ?? false
    }

    /// Every address the forwarding headers name (`Forwarded` per RFC 7239 §4: `for=` parameters,
    /// quoted IPv6 in brackets; `unknown` and obfuscated identifiers are skipped).
    static func claimedClients(forwardedFor: String?, realIP: String?, forwarded: String?) -> [String] {
        var out: [String] = []
        for list in [forwardedFor, realIP].compactMap({ $0 }) {
            out += list.split(separator: ",").map { TrustedProxies.hostOnly(String($0).filter { $0 != " " && $0 != "\t" }) }
        }
        if let forwarded {
            for element in forwarded.split(whereSeparator: { $0 == "," || $0 == ";" }) {
                let pair = element.filter { $0 != " " && $0 != "\t" && $0 != "\"" }
                guard pair.lowercased().hasPrefix("for=") else { continue }
                out.append(TrustedProxies.hostOnly(String(pair.dropFirst(4))))
            }
        }
        return out.filter { IPAddress(Substring($0)) != nil }
    }
}

// The host and token checks of every local-only or token-guarded surface (inspector, metrics, test mode).
extension LocalOnly {
    /// `localhost`, `*.localhost`, an IPv4 literal or a bracketed IPv6 literal, with or without a port.
    public static func isLocalOrLiteral(_ hostHeader: String) -> Bool {
        var host = Substring(hostHeader.lowercased())
        if host.hasPrefix("[") { return host.contains("]") }  // IPv6 literal (RFC 3986 §3.2.2)
        if let colon = host.lastIndex(of: ":") { host = host[..<colon] }
        if host == "localhost" || host.hasSuffix(".localhost") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { p in !p.isEmpty && p.count <= 3 && p.allSatisfy(\.isASCII) && p.allSatisfy(\.isNumber) }
    }

    /// Compares without an early exit on the first differing byte (only the length leaks).
    public static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var diff: UInt8 = 0
        for i in 0..<x.count { diff |= x[i] ^ y[i] }
        return diff == 0
    }
}
