import TSContract
import TSDomain
import TSHTTP
import TSJSON

/// The two hot read paths: `GET /api/rooms/my-rooms` and
/// `POST /api/mobile/posts/interaction-state` answer bytes written from the rows on a reader
/// thread (no `JSONValue` tree), and check the token's user in that same read.
enum ReadPaths {
    /// The bytes `Reply.data` / `Reply.mobile` put around a value, cut out of their own output for
    /// a `null` value (the last member), so the envelopes cannot drift apart.
    static func envelope(of response: HTTPResponse) -> JSONEnvelope {
        let body = response.body
        let null = Array("null".utf8)
        var at = body.count - null.count
        while at >= 0 && Array(body[at..<(at + null.count)]) != null { at -= 1 }
        precondition(at >= 0, "an envelope has a null value")
        return JSONEnvelope(head: Array(body[..<at]), tail: Array(body[(at + null.count)...]))
    }

    static let data = envelope(of: Reply.data(.null))
    static let interactionStateMessage = "Interaction states retrieved successfully"
    static let interactionState = envelope(of: Reply.mobile(interactionStateMessage, .null))

    static func json(_ body: [UInt8]) -> HTTPResponse {
        .bytes(body, contentType: "application/json; charset=utf-8")
    }

    /// `Reply.data` of one object written by `write`, as bytes without a tree (the same bytes:
    /// `JSONBytesWriter` writes what the serializer writes for the tree of the same shape).
    static func data(_ write: (inout JSONBytesWriter) -> Void) -> HTTPResponse {
        var w = JSONBytesWriter(capacity: 256)
        w.raw(data.head)
        w.objectValue(write)
        w.raw(data.tail)
        return json(w.bytes)
    }

    static func myRooms(_ domain: TouchSyncDomain, _ token: VerifiedToken, _ context: RequestContext) async throws -> (PublicUser, HTTPResponse) {
        let (user, body) = try await domain.rooms.myRoomsJSON(token: token, envelope: data)
        return (user, json(body))
    }

    static func interactionState(_ domain: TouchSyncDomain, _ token: VerifiedToken, _ context: RequestContext) async throws
        -> (PublicUser, HTTPResponse) {
        // The ids where they stand in the body when the validation's fast reader took it (plain
        // strings: their bytes are their values); otherwise from the parsed body.
        let ids = if case .plainStrings(let ranges) = context.body {
            PostIdSlices(bytes: context.request.body, ranges: ranges)
        } else {
            PostIdSlices(try context.input().stringArray("postIds"))
        }
        let (user, body) = try await domain.posts.interactionStatesJSON(postIds: ids, token: token, envelope: interactionState)
        return (user, json(body))
    }
}

extension Authenticator {
    /// Like `wrap`, for a handler that reads the token's user itself, inside its own
    /// `Database.read` (`VerifiedToken`): the signature and times are checked here, without I/O.
    /// 401 for a missing, bad, expired or revoked token; a handler error before the user is
    /// known (bad input) still answers 401 first when the token's user does not hold.
    public func wrapRead(_ handler: @escaping @Sendable (VerifiedToken, RequestContext) async throws -> (PublicUser, HTTPResponse)) -> ContextHandler {
        return { context in
            var userId: String? = nil
            do {
                guard let raw = BearerToken.parse(context.request.header("Authorization")) else {
                    throw DomainError.unauthorized("Missing bearer token")
                }
                let token = try self.auth.verifyToken(raw)
                do {
                    var (user, response) = try await handler(token, context)
                    context.user = user
                    response.logUserID = user.id
                    return response
                } catch DomainError.validation(let field, let message) {
                    // Bad input, found before the read: 401 first when the token's user does not hold.
                    userId = try await self.auth.authenticate(token: raw).id
                    throw DomainError.validation(field: field, message: message)
                }
            } catch {
                guard let rendered = APIError.wrap(error, envelope: context.envelope) as? any HTTPResponseConvertibleError else { throw error }
                var response = rendered.response(for: context.request)
                response.logUserID = userId
                return response
            }
        }
    }
}
