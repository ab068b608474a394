// RFC 6455 §4.2 (server-side opening handshake), §4.2.2 (the server's 101 response) and §1.3
// (Sec-WebSocket-Accept computation).
import TSCrypto
import TSHTTP
import TSSockets

/// Validates an upgrade request and builds the server's handshake response.
public enum WebSocketHandshake {
    /// The GUID appended to the client's key (§1.3).
    public static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// Why a request is not a valid opening handshake, with the HTTP status to answer (§4.2.1).
    public enum Rejection: Error, Equatable, Sendable {
        /// Not GET (§4.1 "The method of the request MUST be GET") → 405.
        case methodNotAllowed
        /// No `Upgrade: websocket` token → 400.
        case missingUpgrade
        /// `Connection` without an `upgrade` token → 400.
        case missingConnectionUpgrade
        /// `Sec-WebSocket-Version` missing or not 13 → 426 with `Sec-WebSocket-Version: 13` (§4.2.2).
        case unsupportedVersion
        /// `Sec-WebSocket-Key` missing or not the base64 of 16 bytes → 400 (§4.1).
        case invalidKey
        /// `Origin` not in `allowedOrigins` → 403 (§4.2.2 item 4, §10.2).
        case originNotAllowed

        public var status: Int {
            switch self {
            case .methodNotAllowed: return 405
            case .missingUpgrade, .missingConnectionUpgrade, .invalidKey: return 400
            case .unsupportedVersion: return 426
            case .originNotAllowed: return 403
            }
        }

        public var message: String {
            switch self {
            case .methodNotAllowed: return "WebSocket handshake requires GET"
            case .missingUpgrade: return "missing Upgrade: websocket"
            case .missingConnectionUpgrade: return "missing Connection: upgrade"
            case .unsupportedVersion: return "unsupported Sec-WebSocket-Version (13 required)"
            case .invalidKey: return "invalid Sec-WebSocket-Key"
            case .originNotAllowed: return "origin not allowed"
            }
        }
    }

    /// `Sec-WebSocket-Accept` for a key: base64(SHA-1(key + GUID)) (§1.3, §4.2.2 item 5.4).
    public static func acceptValue(forKey key: String) -> String {
        Base64.encode(SHA1.hash(Array((key + guid).utf8)))
    }

    /// Checks the request's handshake fields (§4.2.1) and returns the trimmed key.
    /// `header` looks a header up case-insensitively.
    public static func validate(
        method: String, header: (String) -> String?, configuration: WebSocketConfiguration
    ) -> Result<String, Rejection> {
        guard method == "GET" else { return .failure(.methodNotAllowed) }
        // §4.2.1 item 3: Upgrade containing "websocket" (case-insensitive token).
        guard let upgrade = header("Upgrade"), containsToken(upgrade, "websocket") else {
            return .failure(.missingUpgrade)
        }
        // §4.2.1 item 4: Connection containing "Upgrade" (a token list, e.g. "keep-alive, Upgrade").
        guard let connection = header("Connection"), containsToken(connection, "upgrade") else {
            return .failure(.missingConnectionUpgrade)
        }
        // §4.2.1 item 6 / §4.4: only version 13.
        guard let version = header("Sec-WebSocket-Version"), trim(version) == "13" else {
            return .failure(.unsupportedVersion)
        }
        // §4.2.1 item 5 / §4.1: base64 of a 16-byte nonce.
        guard let rawKey = header("Sec-WebSocket-Key") else { return .failure(.invalidKey) }
        let key = trim(rawKey)
        guard key.utf8.count == 24, let decoded = Base64.decode(key), decoded.count == 16 else {
            return .failure(.invalidKey)
        }
        // §4.2.2 item 4 / §10.2: origin policy; absent Origin = non-browser client, allowed.
        if let allowed = configuration.allowedOrigins, let origin = header("Origin") {
            let o = trim(origin).lowercased()
            guard allowed.contains(where: { $0.lowercased() == o }) else { return .failure(.originNotAllowed) }
        }
        return .success(key)
    }

    /// The handshake response for `request`: 101 Switching Protocols with `upgrade` set (the
    /// server writes the head, then calls it on the connection's loop; it installs a
    /// `WebSocketConnection`, calls `onUpgrade` — set the delegate there — and feeds the bytes
    /// that followed the request head), or an error response (400/403/405/426).
    public static func response(
        for request: HTTPRequest,
        configuration: WebSocketConfiguration,
        onUpgrade: @escaping @Sendable (WebSocketConnection) -> Void
    ) -> HTTPResponse {
        let result = validate(method: request.method.rawValue, header: { request.header($0) }, configuration: configuration)
        switch result {
        case .failure(let rejection):
            var response = HTTPResponse.text(rejection.message, status: rejection.status)
            if rejection == .unsupportedVersion {
                response.headers.replaceOrAdd("Sec-WebSocket-Version", "13")
            } else if rejection == .methodNotAllowed {
                response.headers.replaceOrAdd("Allow", "GET")
            }
            return response
        case .success(let key):
            var response = HTTPResponse(status: 101)
            response.headers.replaceOrAdd("Upgrade", "websocket")
            response.headers.replaceOrAdd("Connection", "Upgrade")
            response.headers.replaceOrAdd("Sec-WebSocket-Accept", acceptValue(forKey: key))
            response.upgrade = { connection, leftover in
                WebSocketConnection.upgrade(connection, leftover: leftover, configuration: configuration, onUpgrade: onUpgrade)
            }
            return response
        }
    }

    // MARK: Helpers

    /// Whether a comma-separated header value contains `token` (ASCII case-insensitive).
    static func containsToken(_ value: String, _ token: String) -> Bool {
        value.split(separator: ",").contains { trim(String($0)).lowercased() == token }
    }

    static func trim(_ s: String) -> String {
        var scalars = Substring(s)
        while let f = scalars.first, f == " " || f == "\t" { scalars.removeFirst() }
        while let l = scalars.last, l == " " || l == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
