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
    public var auth: JSONValue? { packedAuth?.value }
    private let packedAuth: SocketIOPackedJSON?

    public init(namespace: String, request: EngineHandshakeInfo, auth: JSONValue?) {
        self.namespace = namespace
        self.request = request
        packedAuth = auth.map(SocketIOPackedJSON.init)
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
