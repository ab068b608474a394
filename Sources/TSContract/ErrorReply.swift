import TSDomain
import TSStorage

/// What a request or a Socket.IO event answers for an error it raised: the HTTP status, the
/// contract's code and message (docs/api.md "Errors"), the offending field and `Retry-After`.
/// One mapping for both wires: a REST route renders it in its envelope (`APIError`), a socket
/// event's ack carries its code and message, so a refusal reads the same on both.
public struct ErrorReply: Sendable, Equatable {
    public let status: Int
    public let code: String
    public let message: String
    public let field: String?
    /// Sent as `Retry-After` (429, 503).
    public let retryAfterSeconds: Int64?

    public init(status: Int, code: String, message: String, field: String? = nil, retryAfterSeconds: Int64? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// The contract's answer for `error`, or nil for an error the contract does not name (the
    /// caller answers 500 or `INTERNAL` without detail, and logs it).
    public init?(_ error: any Error) {
        if let d = error as? DomainError {
            self.init(status: d.status, code: d.code, message: d.message, field: d.field)
        } else if let t = error as? AuthService.Throttled {
            self.init(status: 429, code: "RATE_LIMITED", message: "Too many failed logins; retry in \(t.retryAfterSeconds) s",
                      retryAfterSeconds: t.retryAfterSeconds)
        } else if let w = error as? WriteRateLimited {
            // limits.*: this user's budget for this kind of write is spent; other users are unaffected.
            self.init(status: 429, code: "RATE_LIMITED", message: w.message, retryAfterSeconds: w.retryAfterSeconds)
        } else if error is DatabaseOverloadedError {
            // Every reader is busy and database.maxQueuedReads reads already wait: shed load.
            self.init(status: 503, code: "UNAVAILABLE", message: "The server is busy; retry shortly", retryAfterSeconds: 1)
        } else if let u = error as? DatabaseUnavailableError {
            // PostgreSQL unreachable; refused at once, reconnecting in the background.
            self.init(status: 503, code: "UNAVAILABLE", message: "The database is unreachable; retry shortly",
                      retryAfterSeconds: u.retryAfterSeconds)
        } else if let s = error as? StorageError, s.isForeignKeyViolation {
            // A row the write refers to was deleted by a transaction that committed meanwhile (on
            // PostgreSQL, e.g. the caller's account deleted while another device of theirs wrote).
            self.init(status: 409, code: "CONFLICT", message: "Something this request refers to was deleted meanwhile; reload and retry")
        } else {
            return nil
        }
    }
}
