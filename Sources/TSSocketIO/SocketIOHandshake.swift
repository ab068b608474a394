import TSEngineIO
import TSJSON

/// What the server knows about a namespace connection request: the Engine.IO handshake
/// request (query, headers such as `Authorization`, peer) and the CONNECT packet's auth payload.
public struct SocketIOHandshake: Sendable {
    public let namespace: String
    /// The HTTP request that opened the Engine.IO session.
    public let request: EngineHandshakeInfo
    /// The CONNECT packet's payload (`40{"token":"…"}`), nil when none was sent. Kept packed
    /// (the handshake lives as long as the socket): parsed again on each read.
    public var auth: JSONValue? {
        switch storedAuth {
        case .none: return nil
        case .packed(let p): return p.value
        case .queryValue(let key): return .object(JSONObject([(key, .string(request.queryValue(key) ?? ""))]))
        }
    }
    private let storedAuth: StoredAuth

    /// How the auth payload is kept. A client that sends its token both in the handshake query
    /// and in the CONNECT auth (`?token=T` and `40{"token":"T"}`, as socket.io-client apps often
    /// do) would have it kept twice for the socket's life: when the auth is an object with one
    /// string member whose value equals the query parameter of the same name, only that name is
    /// kept and the value is read back from the query (the same `JSONValue` either way).
    private enum StoredAuth: Sendable {
        case none
        case packed(SocketIOPackedJSON)
        /// `{key: query[key]}`; `key` is at most 15 UTF-8 bytes, so it is stored inline.
        case queryValue(String)
    }

    public init(namespace: String, request: EngineHandshakeInfo, auth: JSONValue?) {
        self.namespace = namespace
        self.request = request
        guard let auth else {
            storedAuth = .none
            return
        }
        if case .object(let o) = auth, o.pairs.count == 1, case .string(let value) = o.pairs[0].value,
           o.pairs[0].key.utf8.count <= 15, request.queryValue(o.pairs[0].key) == value {
            storedAuth = .queryValue(o.pairs[0].key)
        } else {
            storedAuth = .packed(SocketIOPackedJSON(auth))
        }
    }

    public var query: [String: String] { request.query }
    public var headers: [(name: String, value: String)] { request.headers }
    public var remoteAddress: String? { request.remoteAddress }

    /// First header with this name (case-insensitive).
    public func header(_ name: String) -> String? { request.header(name) }
}

/// The authenticator's verdict on a namespace CONNECT.
public enum SocketIOAuthResult: Sendable {
    case accept(userID: String?, data: JSONValue)
    /// Answered with CONNECT_ERROR `{"message": message}`.
    case reject(message: String)
}
