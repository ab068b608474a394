/// Query, headers and peer address of the request that opened a session.
public struct EngineHandshakeInfo: Sendable {
    public var query: [String: String]
    public var headers: [(name: String, value: String)]
    public var remoteAddress: String?

    public init(query: [String: String], headers: [(name: String, value: String)], remoteAddress: String?) {
        self.query = query
        self.headers = headers
        self.remoteAddress = remoteAddress
    }

    /// First header with this name (case-insensitive).
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name.lowercased() == lower }?.value
    }
}
