import TSDomain
import TSHTTP

/// Bearer-token authentication for `/api/**` (docs/api.md, "Conventions").
public struct Authenticator: Sendable {
    let auth: AuthService

    public init(auth: AuthService) { self.auth = auth }

    /// The token of `Authorization: Bearer <token>`, if any.
    public static func bearerToken(_ header: String?) -> String? {
        guard let h = header else { return nil }
        let parts = h.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: " ")
        return token.isEmpty ? nil : token
    }

    public func user(for request: HTTPRequest) async throws -> PublicUser {
        guard let token = Self.bearerToken(request.header("Authorization")) else {
            throw DomainError.unauthorized("Missing bearer token")
        }
        return try await auth.authenticate(token: token)
    }

    /// Wraps an authenticated handler: 401 without a valid token; domain errors rendered in the
    /// envelope of the route family; the caller's id goes into the access log.
    public func wrap(_ handler: @escaping @Sendable (RouteContext) async throws -> HTTPResponse) -> HTTPHandler {
        return { request in
            let envelope = Envelope.forPath(request.path)
            var userId: String? = nil
            do {
                let user = try await self.user(for: request)
                userId = user.id
                var response = try await handler(RouteContext(request: request, user: user, envelope: envelope))
                response.logUserID = user.id
                return response
            } catch {
                // Render known errors here so the access log still names the caller.
                guard let rendered = APIError.wrap(error, envelope: envelope) as? any HTTPResponseConvertibleError else { throw error }
                var response = rendered.response(for: request)
                response.logUserID = userId
                return response
            }
        }
    }

    /// Wraps a public handler (register, login): only the error rendering.
    public static func open(_ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) -> HTTPHandler {
        return { request in
            do { return try await handler(request) } catch { throw APIError.wrap(error, envelope: Envelope.forPath(request.path)) }
        }
    }
}

extension Substring {
    func trimmingCharacters(in set: Character) -> String {
        var s = self
        while s.first == set { s.removeFirst() }
        while s.last == set { s.removeLast() }
        return String(s)
    }
}
