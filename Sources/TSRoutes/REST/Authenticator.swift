import TSDomain
import TSHTTP

/// Bearer-token authentication for `/api/**` (docs/api.md, "Conventions").
public struct Authenticator: Sendable {
    let auth: AuthService

    public init(auth: AuthService) { self.auth = auth }

    /// The token of `Authorization: Bearer <token>`, if any.
    public static func bearerToken(_ header: String?) -> String? {
        guard var h = header else { return nil }
        // All ASCII (every real header): the same answer read from the bytes, with one `String` (the token).
        if let ascii = h.withUTF8({ asciiBearerToken($0) }) { return ascii }
        let parts = h.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: " ")
        return token.isEmpty ? nil : token
    }

    /// `bearerToken` of an all-ASCII header, where characters are bytes: the first space-separated
    /// word must be `bearer` in any case, the token is the rest without its surrounding spaces.
    /// Nil when the header is not all ASCII (the caller then splits it by characters); `.some(nil)`
    /// when it holds no bearer token.
    static func asciiBearerToken(_ b: UnsafeBufferPointer<UInt8>) -> String?? {
        var i = 0
        for byte in b where byte >= 0x80 { return nil }
        while i < b.count, b[i] == 0x20 { i += 1 }
        let word = i
        while i < b.count, b[i] != 0x20 { i += 1 }
        guard i - word == 6, i < b.count else { return .some(nil) }
        for (k, letter) in "bearer".utf8.enumerated() where b[word + k] | 0x20 != letter { return .some(nil) }
        var start = i + 1, end = b.count
        while start < end, b[start] == 0x20 { start += 1 }
        while end > start, b[end - 1] == 0x20 { end -= 1 }
        guard start < end else { return .some(nil) }
        return String(decoding: UnsafeBufferPointer(rebasing: b[start..<end]), as: UTF8.self)
    }

    public func user(for request: HTTPRequest) async throws -> PublicUser {
        guard let token = Self.bearerToken(request.header("Authorization")) else {
            throw DomainError.unauthorized("Missing bearer token")
        }
        return try await auth.authenticate(token: token)
    }

    /// An authenticated route's handler behind the authentication step (`Authentication`): the
    /// handler gets the caller.
    public func wrap(_ handler: @escaping @Sendable (RouteContext) async throws -> HTTPResponse) -> ContextHandler {
        let step = Authentication(authenticator: self)
        return { context in
            try await step.handle(&context) { context in
                guard let user = context.user else { throw DomainError.unauthorized("Missing bearer token") }
                return try await handler(RouteContext(context: context, user: user))
            }
        }
    }

    /// A public route of the pipeline (register, login): only the error rendering.
    public static func unauthenticated(_ handler: @escaping @Sendable (RequestContext) async throws -> HTTPResponse) -> ContextHandler {
        return { context in
            do { return try await handler(context) } catch { throw APIError.wrap(error, envelope: context.envelope) }
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
