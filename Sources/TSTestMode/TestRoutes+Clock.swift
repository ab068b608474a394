import Foundation
import TSDomain
import TSHTTP
import TSJSON
import TSRoutes

/// `GET/POST /api/test/clock`: test mode's movable clock (`MovableWallClock`). Every domain time
/// reads it: token `iat`/`exp`/`nbf` and their checks, `createdAt`/`updatedAt`, notification
/// pruning, the write limits' buckets. The Engine.IO heartbeats do not (they run on the monotonic
/// clock), so moving time never disconnects a socket. `POST /api/test/reset` puts it back.
extension TestRoutes {
    /// The longest move one call makes either way: far past any token lifetime or retention, and
    /// well inside the range the timestamps can show.
    static let maxClockMoveSeconds: Int64 = 100 * 366 * 86_400

    func registerClock(into router: inout RouterBuilder) {
        guard let clock else { return }
        router.get("/api/test/clock", Authenticator.open { _ in Reply.data(Self.clockState(clock)) })
        router.post("/api/test/clock", Authenticator.open { request in
            guard let body = try request.jsonBody().objectValue else {
                throw DomainError.validation(field: "body", message: "must be a JSON object: {\"advance\": \"31d\"}, {\"set\": \"<RFC 3339>\"} or {\"reset\": true}")
            }
            let given = ["advance", "set", "reset"].filter { body[$0] != nil }
            guard given.count == 1, let which = given.first else {
                throw DomainError.validation(field: "body", message: "give exactly one of advance, set or reset")
            }
            switch which {
            case "advance":
                guard let text = body["advance"]?.stringValue, let seconds = Self.parseClockMove(text) else {
                    throw DomainError.validation(field: "advance", message: "must be a duration such as 31d, 12h, 90m, 30s or -1h, at most 100 years either way")
                }
                clock.advance(byMicroseconds: seconds * 1_000_000)
            case "set":
                guard let text = body["set"]?.stringValue, let micros = Self.parseRFC3339(text) else {
                    throw DomainError.validation(field: "set", message: "must be an RFC 3339 date-time, e.g. 2027-01-01T09:00:00Z")
                }
                clock.set(nowMicroseconds: micros)
            default:
                guard body["reset"]?.boolValue == true else { throw DomainError.validation(field: "reset", message: "must be true") }
                clock.reset()
            }
            if let cluster {  // every test-mode node of the cluster takes the same offset
                let outcome = await cluster.moveClock(offsetMicroseconds: clock.offsetMicroseconds)
                guard outcome.unanswered.isEmpty else {
                    throw APIError(status: 504, code: "CLUSTER_TIMEOUT", message: "the clock moved on this node and \(outcome.nodes - 1) other node(s), "
                                   + "but these live test-mode nodes did not confirm it in time: \(outcome.unanswered.joined(separator: ", "))")
                }
            }
            logger.info("test clock: \(which) → offset \(clock.offsetMicroseconds / 1_000_000) s")
            return Reply.data(Self.clockState(clock))
        })
    }

    static func clockState(_ clock: MovableWallClock) -> JSONValue {
        let now = clock.nowMicroseconds()
        return .object(["now": .string(Timestamp.iso8601(now / 1_000_000)), "nowMs": .int(now / 1000),
                        "offsetSeconds": .int(clock.offsetMicroseconds / 1_000_000), "moved": .bool(clock.offsetMicroseconds != 0)])
    }

    /// `31d`, `12h`, `90m`, `30s`, optionally with a leading `-`: whole seconds.
    static func parseClockMove(_ text: String) -> Int64? {
        var body = Substring(text)
        let sign: Int64 = body.hasPrefix("-") ? -1 : 1
        if body.hasPrefix("-") || body.hasPrefix("+") { body = body.dropFirst() }
        guard let unit = body.last, let count = Int64(body.dropLast()), count >= 0 else { return nil }
        let scale: Int64
        switch unit {
        case "s": scale = 1
        case "m": scale = 60
        case "h": scale = 3600
        case "d": scale = 86_400
        default: return nil
        }
        guard count <= maxClockMoveSeconds / scale else { return nil }
        return sign * count * scale
    }

    /// RFC 3339 §5.6 `date-time`: `2027-01-01T09:00:00Z`, with fractional seconds or an offset.
    static func parseRFC3339(_ text: String) -> Int64? {
        if let seconds = Timestamp.parse(text) { return seconds * 1_000_000 }
        let f = ISO8601DateFormatter()
        for options: ISO8601DateFormatter.Options in [[.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds]] {
            f.formatOptions = options
            if let d = f.date(from: text) { return Int64((d.timeIntervalSince1970 * 1_000_000).rounded()) }
        }
        return nil
    }
}
