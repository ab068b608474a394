import TSJSON

/// What the server knows about a namespace connection request: the Engine.IO handshake
/// request (query, headers such as `Authorization`, peer) and the CONNECT packet's auth payload.
public struct SocketIOHandshake: Sendable {
    public let namespace: String
    public let query: [String: String]
    public let headers: [(name: String, value: String)]
    public let remoteAddress: String?
    /// The CONNECT packet's payload (`40{"token":"…"}`), nil when none was sent.
    public let auth: JSONValue?

    public init(namespace: String, query: [String: String], headers: [(name: String, value: String)],
                remoteAddress: String?, auth: JSONValue?) {
        self.namespace = namespace
        self.query = query
        self.headers = headers
        self.remoteAddress = remoteAddress
        self.auth = auth
    }

    /// First header with this name (case-insensitive).
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name.lowercased() == lower }?.value
    }
}

/// The authenticator's verdict on a namespace CONNECT.
public enum SocketIOAuthResult: Sendable {
    case accept(userID: String?, data: JSONValue)
    /// Answered with CONNECT_ERROR `{"message": message}`.
    case reject(message: String)
}
