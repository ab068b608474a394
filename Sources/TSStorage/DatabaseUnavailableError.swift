/// The database cannot be reached (PostgreSQL down, network cut): the request is refused at once
/// instead of waiting, and the REST layer answers 503 `UNAVAILABLE` with `Retry-After`. The
/// connection is retried in the background with exponential backoff (`database.reconnectInitialBackoff`
/// … `database.reconnectMaxBackoff`); service resumes by itself once it answers again.
public struct DatabaseUnavailableError: Error, CustomStringConvertible, Sendable {
    /// Why, for logs and the `/health` answer (no credentials: the URL is redacted).
    public let reason: String
    /// A hint for `Retry-After`: the current reconnection backoff, in whole seconds (at least 1).
    public let retryAfterSeconds: Int64

    public init(reason: String, retryAfterSeconds: Int64) {
        self.reason = reason
        self.retryAfterSeconds = max(1, retryAfterSeconds)
    }

    public var description: String { "database unavailable: \(reason)" }
}
