import Dispatch
import Logging
import TSDomain
import TSHTTP
import TSRealtime
import TSRoutes

/// `GET /api/test/events?wait=`: a long-poll on the event log, so a test awaiting an event makes
/// one request instead of polling in a loop (docs/test-mode.md "Waiting for an event").
extension TestRoutes {
    /// Longest `?wait=`: a long-poll never holds a request longer.
    public static let maxEventWaitMilliseconds = 30_000

    /// The page of events after `since` matching the filters; while it is empty, suspends on the
    /// log until a newer event is recorded (any event: the filters are checked again) or `wait`
    /// runs out. No thread is held while it waits.
    static func events(_ log: RealtimeEventLog, since: Int64, limit: Int, event: String?, roomId: String?, wait: String?,
                       logger: Logger) async throws -> RealtimeEventLog.Page {
        var waitMs = 0
        if let wait {
            guard let v = milliseconds(wait), v <= maxEventWaitMilliseconds else {
                throw DomainError.validation(field: "wait", message: "must be a duration from 0 to 30s (e.g. 500ms, 5s or 5)")
            }
            waitMs = v
        }
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(waitMs) * 1_000_000
        var page = log.events(since: since, limit: limit, event: event, roomId: roomId)
        while page.entries.isEmpty {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { break }
            let outcome = await log.waitForEvent(after: page.lastSequence, timeoutMilliseconds: Int((deadline - now + 999_999) / 1_000_000))
            if outcome == .tooManyWaiters {
                logger.warning("test events: long-poll refused, \(log.maxWaiters) requests already waiting")
                throw APIError(status: 503, code: "SERVICE_UNAVAILABLE",
                               message: "\(log.maxWaiters) requests are already waiting for events; retry, or ask without wait",
                               field: "wait", retryAfterSeconds: 1)
            }
            page = log.events(since: since, limit: limit, event: event, roomId: roomId)
            if outcome == .timedOut { break }
        }
        return page
    }

    /// A `?wait=` duration in milliseconds: `250ms`, `5s`, or a bare number of seconds (`5`, `0.5`).
    static func milliseconds(_ raw: String) -> Int? {
        let (number, scale): (Substring, Double) =
            raw.hasSuffix("ms") ? (raw.dropLast(2), 1) : raw.hasSuffix("s") ? (raw.dropLast(1), 1000) : (raw[...], 1000)
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let v = Double(number), v.isFinite else { return nil }
        let ms = (v * scale).rounded(.up)
        return ms <= Double(Int32.max) ? Int(ms) : nil
    }
}
