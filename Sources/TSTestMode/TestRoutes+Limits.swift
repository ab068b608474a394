import TSDomain
import TSHTTP
import TSJSON
import TSRoutes

/// `POST /api/test/limits` (docs/test-mode.md "Write limits"): in test mode the write limits
/// (`limits.*`, sign-ups included) start off, because an app's test set-up is a burst (hundreds of
/// elements as one user, many accounts from one address); a test that checks the app's handling of
/// 429 turns them on here with the configured rules, and `POST /api/test/reset` turns them off again.
extension TestRoutes {
    func registerLimits(into router: inout RouterBuilder) {
        let limits = domain.writeLimits
        let logger = self.logger
        router.post("/api/test/limits", Authenticator.open { request in
            let body = try request.jsonBody()
            guard case .object = body else { throw DomainError.validation(field: "body", message: "must be an object {\"enabled\": true|false}") }
            guard let enabled = body["enabled"]?.boolValue else { throw DomainError.validation(field: "enabled", message: "is required: true or false") }
            limits.setActive(enabled)
            logger.info("test mode: write limits turned \(enabled ? "on (every budget full)" : "off")")
            return Reply.data(Self.limitsState(limits))
        })
    }

    static func limitsState(_ limits: WriteLimits) -> JSONValue {
        .object(["enabled": .bool(limits.isActive)])
    }
}
