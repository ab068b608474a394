/// Errors of the TouchSync domain. Each maps onto one HTTP status (docs/api.md, "Conventions"); the
/// route layer renders them in the envelope of the route family that raised them.
public enum DomainError: Error, Sendable, Equatable {
    /// 400: `field` names the offending input field and `message` says why.
    case validation(field: String, message: String)
    /// 401: missing, invalid or expired credentials.
    case unauthorized(String)
    /// 403: authenticated, but not allowed (not a member of the room).
    case forbidden(String)
    /// 404: `what` names the missing thing ("Room", "Element", …).
    case notFound(String)
    /// 409: a uniqueness rule was broken.
    case conflict(String)

    public var status: Int {
        switch self {
        case .validation: return 400
        case .unauthorized: return 401
        case .forbidden: return 403
        case .notFound: return 404
        case .conflict: return 409
        }
    }

    public var code: String {
        switch self {
        case .validation: return "VALIDATION_ERROR"
        case .unauthorized: return "UNAUTHORIZED"
        case .forbidden: return "FORBIDDEN"
        case .notFound: return "NOT_FOUND"
        case .conflict: return "CONFLICT"
        }
    }

    public var message: String {
        switch self {
        case .validation(let field, let message): return "\(field): \(message)"
        case .unauthorized(let m), .forbidden(let m), .conflict(let m): return m
        case .notFound(let what): return "\(what) not found"
        }
    }

    public var field: String? {
        if case .validation(let field, _) = self { return field }
        return nil
    }
}
