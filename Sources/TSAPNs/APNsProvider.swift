import Dispatch
import Logging
import TSDomain
import TSJSON
import TSStorage

/// Delivers notifications to iOS devices through Apple Push Notification service
/// ("Sending notification requests to APNs"): `POST /3/device/<token>` over HTTP/2 with a
/// provider token (`APNsProviderToken`), the headers `apns-topic`, `apns-push-type` and
/// `apns-priority`, and a JSON `aps` payload.
///
/// - Runs every request on its own serial queue (libcurl blocks): `deliver` only enqueues and
///   waits on a continuation, so neither an event loop nor the cooperative pool ever waits for
///   the network.
/// - 200: delivered. 410 `Unregistered` or 400 `BadDeviceToken`: the device row is deleted.
///   403 `ExpiredProviderToken`/`InvalidProviderToken`: the token is re-signed and the request
///   retried. 429 and 5xx (and a failed connection): retried after `retryBase × 2ⁿ` up to
///   `maxRetries` times, then counted as failed. Other 4xx: rejected (logged, not retried).
/// - Each outcome is counted (`onOutcome`, exported in /metrics).
/// - Only `ios` devices are sent to; Android tokens are left to another backend.
public final class APNsProvider: NotificationDelivery, Sendable {
    public struct Configuration: Sendable {
        /// `https://api.sandbox.push.apple.com` (development builds), `https://api.push.apple.com`
        /// (production), or `http://127.0.0.1:<port>` for a local HTTP/2 test server.
        public var endpoint: String
        /// The app's bundle id (`apns-topic`).
        public var topic: String
        public var priority = 10
        public var maxRetries = 3
        /// The first retry's delay (whole milliseconds); each next one doubles it.
        public var retryBase: Duration = .milliseconds(500)
        /// Total time of one request, connection included (whole milliseconds).
        public var requestTimeout: Duration = .seconds(10)
        /// A CA bundle (PEM) to verify the host with instead of the system's.
        public var caFile: String?

        public init(endpoint: String, topic: String) {
            self.endpoint = endpoint
            self.topic = topic
        }

        public static func endpoint(environment: String) -> String? {
            switch environment {
            case "sandbox", "development": return "https://api.sandbox.push.apple.com"
            case "production": return "https://api.push.apple.com"
            default: return nil
            }
        }
    }

    public enum Outcome: String, Sendable, CaseIterable {
        case delivered, unregistered, badDeviceToken = "bad_device_token", rejected, retried, failed
    }

    let configuration: Configuration
    let token: APNsProviderToken
    let db: Database
    let logger: Logger
    let onOutcome: @Sendable (Outcome) -> Void
    let nowSeconds: @Sendable () -> Int64
    let queue = DispatchQueue(label: "touchsync.apns")
    let transport: APNsTransport

    public init(configuration: Configuration, token: APNsProviderToken, db: Database, logger: Logger,
                nowSeconds: @escaping @Sendable () -> Int64, onOutcome: @escaping @Sendable (Outcome) -> Void = { _ in }) throws {
        self.configuration = configuration
        self.token = token
        self.db = db
        self.logger = logger
        self.nowSeconds = nowSeconds
        self.onOutcome = onOutcome
        transport = try APNsTransport(priorKnowledge: configuration.endpoint.hasPrefix("http://"),
                                      timeoutMs: configuration.requestTimeout.wholeMilliseconds, caFile: configuration.caFile)
    }

    public func deliver(_ n: NotificationRecord, deviceTokens: [String]) async {
        guard !deviceTokens.isEmpty else { return }
        let (tokens, alert): ([String], JSONObject)
        do { (tokens, alert) = try await prepare(n, deviceTokens) } catch {
            logger.error("apns: cannot prepare notification \(n.id): \(error)")
            return
        }
        guard !tokens.isEmpty else { return }
        let payload = JSONValue.object([
            "aps": .object(["alert": .object(alert), "sound": "default", "thread-id": .optional(n.roomId)]),
            "type": .string(n.type.rawValue), "notificationId": .string(n.id), "roomId": .optional(n.roomId),
            "elementId": .optional(n.elementId), "actorId": .optional(n.actorId),
        ]).serialized()
        for device in tokens {
            let outcome = await send(payload, to: device)
            if outcome == .unregistered || outcome == .badDeviceToken {
                do {
                    try await db.write { c in _ = try c.run("DELETE FROM devices WHERE token = ? AND platform = 'ios'", [.text(device)]) }
                    logger.info("apns: removed device \(Self.redact(device)) (\(outcome.rawValue))")
                } catch { logger.error("apns: could not remove device \(Self.redact(device)): \(error)") }
            }
        }
    }

    /// The iOS tokens among `tokens`, and the alert's title and body.
    func prepare(_ n: NotificationRecord, _ tokens: [String]) async throws -> ([String], JSONObject) {
        try await db.read { c in
            let ios = try c.rows("SELECT d.token FROM devices d JOIN json_each(?) j ON j.value = d.token WHERE d.platform = 'ios'",
                                 [.text(JSONValue.array(tokens.map(JSONValue.string)).serializedString())]) { $0.string(0) }
            let actor = try n.actorId.flatMap { try c.scalarString("SELECT COALESCE(first_name, username) FROM users WHERE id = ?", [.text($0)]) } ?? "Someone"
            let room = try n.roomId.flatMap { try c.scalarString("SELECT name FROM rooms WHERE id = ?", [.text($0)]) } ?? "a room"
            let body = n.type == .elementReaction ? "\(actor) hearted your element in \(room)" : "\(actor) added an element to \(room)"
            return (ios, ["title": "TouchSync", "body": .string(body)])
        }
    }

    /// One device: the request on the provider's queue, retried with backoff; resumes with the final outcome.
    func send(_ payload: [UInt8], to device: String) async -> Outcome {
        await withCheckedContinuation { (cont: CheckedContinuation<Outcome, Never>) in
            attempt(payload, device, try: 0, refreshed: false) { cont.resume(returning: $0) }
        }
    }

    private func attempt(_ payload: [UInt8], _ device: String, try n: Int, refreshed: Bool, done: @escaping @Sendable (Outcome) -> Void) {
        queue.async { [self] in
            let result = exchange(payload, device)
            switch result {
            case .final(let outcome):
                onOutcome(outcome)
                done(outcome)
            case .refreshToken where !refreshed:
                token.invalidate()
                onOutcome(.retried)
                attempt(payload, device, try: n, refreshed: true, done: done)
            case .refreshToken:
                onOutcome(.rejected)
                done(.rejected)
            case .retry(let why):
                guard n < configuration.maxRetries else {
                    logger.warning("apns: giving up on \(Self.redact(device)) after \(n + 1) attempts: \(why)")
                    onOutcome(.failed)
                    done(.failed)
                    return
                }
                onOutcome(.retried)
                let delay = configuration.retryBase.wholeMilliseconds << min(n, 16)
                logger.info("apns: \(why); retry \(n + 1) of \(configuration.maxRetries) in \(delay) ms")
                queue.asyncAfter(deadline: .now() + .milliseconds(delay)) { [self] in
                    attempt(payload, device, try: n + 1, refreshed: refreshed, done: done)
                }
            }
        }
    }

    enum Exchange { case final(Outcome), retry(String), refreshToken }

    /// One request and what its answer means. Runs on `queue`.
    func exchange(_ payload: [UInt8], _ device: String) -> Exchange {
        let jwt: String
        do { jwt = try token.token(now: nowSeconds()) } catch {
            logger.error("apns: cannot sign the provider token: \(error)")
            return .final(.failed)
        }
        let url = configuration.endpoint + "/3/device/" + device
        let headers = [("authorization", "bearer " + jwt), ("apns-topic", configuration.topic), ("apns-push-type", "alert"),
                       ("apns-priority", String(configuration.priority)), ("content-type", "application/json")]
        let response: APNsTransport.Response
        do { response = try transport.post(url: url, headers: headers, body: payload) } catch {
            return .retry("connection to \(configuration.endpoint) failed: \(error)")
        }
        let reason = (try? JSONValue.parse(response.body))?["reason"]?.stringValue ?? ""
        switch response.status {
        case 200: return .final(.delivered)
        case 410: return .final(.unregistered)
        case 400 where reason == "BadDeviceToken": return .final(.badDeviceToken)
        case 403 where reason == "ExpiredProviderToken" || reason == "InvalidProviderToken": return .refreshToken
        case 429, 500...599: return .retry("APNs answered \(response.status) \(reason)")
        default:
            logger.warning("apns: \(Self.redact(device)) rejected: \(response.status) \(reason)")
            return .final(.rejected)
        }
    }

    /// A device token in logs: its first 8 characters.
    static func redact(_ token: String) -> String { String(token.prefix(8)) + "…" }
}
