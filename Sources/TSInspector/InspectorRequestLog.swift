import Dispatch
import TSHTTP
import TSJSON
import TSRoutes
import TSSync

/// The inspector's request list: the last `capacity` request/response pairs with their bodies,
/// each body cut to `maxBodyBytes` when recorded (settings `inspector.requestLogCapacity` and
/// `inspector.requestLogMaxBodyBytes`). On only outside production (`TouchSyncServer` does not
/// install it there). The inspector's own requests, Socket.IO's polling requests and the
/// health/metrics probes are not recorded.
///
/// Secrets never leave it: `Authorization`, `Cookie` and `Set-Cookie` headers, the `token`
/// query parameter, and every JSON member named like a secret (`password`, `token`,
/// `passwordHash`, `jwtSecret`, …) are replaced by `"[redacted]"` when an entry is read; a body that
/// is not JSON (or was cut) has such `"key": "value"` pairs masked textually.
public final class InspectorRequestLog: Sendable {
    public struct Entry: Sendable {
        public let sequence: Int64
        public let requestId: String
        public let method: String
        public let target: String
        public let requestHeaders: [(String, String)]
        public let requestBody: [UInt8]
        public let requestBodyBytes: Int
        public let status: Int
        public let responseHeaders: [(String, String)]
        public let responseBody: [UInt8]
        public let responseBodyBytes: Int
        public let durationMicroseconds: Int64
        public let timestampMs: Int64
    }

    /// Paths not recorded: the inspector (it would record its own polling), Engine.IO transports,
    /// and the probes a container runtime or Prometheus sends every few seconds.
    static let excludedPrefixes = ["/inspector", "/socket.io/", "/health", "/metrics"]

    public let capacity: Int
    public let maxBodyBytes: Int
    private let state: LockedValue<(ring: [Entry], next: Int, sequence: Int64)>

    public init(capacity: Int, maxBodyBytes: Int) {
        self.capacity = max(1, capacity)
        self.maxBodyBytes = max(0, maxBodyBytes)
        state = LockedValue(([], 0, 0))
    }

    static func isRecorded(_ path: String) -> Bool { !excludedPrefixes.contains { path.hasPrefix($0) } }

    /// Records one exchange; bodies are cut to `maxBodyBytes` here, before anything is kept.
    public func record(_ request: HTTPRequest, _ response: HTTPResponse, durationMicroseconds: Int64, timestampMs: Int64) {
        guard Self.isRecorded(request.path) else { return }
        let reqBody = Array(request.body.prefix(maxBodyBytes))
        let resBody = Array(response.body.prefix(maxBodyBytes))
        state.withLock { s in
            s.sequence += 1
            let entry = Entry(sequence: s.sequence, requestId: request.requestID, method: request.method.rawValue, target: request.target,
                              requestHeaders: request.headers.map { ($0.name, $0.value) }, requestBody: reqBody,
                              requestBodyBytes: request.body.count, status: response.status,
                              responseHeaders: response.headers.map { ($0.name, $0.value) }, responseBody: resBody,
                              responseBodyBytes: response.body.count, durationMicroseconds: durationMicroseconds, timestampMs: timestampMs)
            if s.ring.count < capacity { s.ring.append(entry) } else { s.ring[s.next] = entry }
            s.next = (s.next + 1) % capacity
        }
    }

    /// Entries with `sequence > since`, newest first, at most `limit`.
    public func entries(since: Int64 = 0, limit: Int) -> [Entry] {
        let all = state.withLock { s -> [Entry] in
            s.ring.count < capacity ? s.ring : Array(s.ring[s.next...] + s.ring[..<s.next])
        }
        return Array(all.reversed().prefix { $0.sequence > since }.prefix(limit))
    }

    public var lastSequence: Int64 { state.withLock { $0.sequence } }

    // MARK: redaction

    static let secretHeaders: Set<String> = ["authorization", "cookie", "set-cookie", "proxy-authorization", "x-api-key"]

    /// JSON member names whose values are secrets (compared case-insensitively).
    static func isSecretKey(_ key: String) -> Bool {
        let k = key.lowercased()
        return k.contains("password") || k.contains("token") || k.contains("secret") || k == "authorization" || k.hasSuffix("hash")
    }

    static let redacted = "[redacted]"

    static func redactHeaders(_ headers: [(String, String)]) -> JSONValue {
        .array(headers.map { name, value in
            .array([.string(name), .string(secretHeaders.contains(name.lowercased()) ? redacted : value)])
        })
    }

    /// `?token=…` (the inspector's own and Socket.IO's query token) masked.
    static func redactTarget(_ target: String) -> String {
        guard let q = target.firstIndex(of: "?") else { return target }
        let pairs = target[target.index(after: q)...].split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            let name = pair.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            return isSecretKey(name) ? name + "=" + redacted : String(pair)
        }
        return String(target[..<q]) + "?" + pairs.joined(separator: "&")
    }

    static func redactJSON(_ v: JSONValue) -> JSONValue {
        switch v {
        case .object(let o):
            return .object(JSONObject(o.pairs.map { k, value in
                (k, isSecretKey(k) && !value.isNull ? JSONValue.string(redacted) : redactJSON(value))
            }))
        case .array(let a): return .array(a.map(redactJSON))
        default: return v
        }
    }

    /// A body for display: redacted JSON when it parses, else text with `"secret": "…"` masked.
    static func displayBody(_ bytes: [UInt8], total: Int) -> JSONValue {
        if bytes.isEmpty { return .null }
        if bytes.count == total, let v = try? JSONValue.parse(bytes) { return .object(["json": redactJSON(v)]) }
        return .object(["text": .string(maskSecretsInText(String(decoding: bytes, as: UTF8.self)))])
    }

    /// Masks the string value after every `"key"` whose name is a secret: for bodies that were cut.
    static func maskSecretsInText(_ text: String) -> String {
        var out = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "\"") {
            out += rest[..<open]
            rest = rest[rest.index(after: open)...]
            guard let close = rest.firstIndex(of: "\"") else { out += "\"" + rest; return out }
            let key = rest[..<close]
            out += "\"" + key + "\""
            rest = rest[rest.index(after: close)...]
            guard isSecretKey(String(key)) else { continue }
            // `: "value"` → `: "[redacted]"` (whatever the value's length, even cut off).
            let afterColon = rest.drop { $0 == " " || $0 == ":" }
            guard afterColon.first == "\"", rest.first == ":" || rest.first == " " else { continue }
            out += rest[..<afterColon.startIndex] + "\"" + redacted + "\""
            let value = afterColon.dropFirst()
            var i = value.startIndex
            var escaped = false
            while i < value.endIndex {
                let c = value[i]
                if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { break }
                i = value.index(after: i)
            }
            rest = i < value.endIndex ? value[value.index(after: i)...] : ""
        }
        return out + rest
    }

    static func json(_ e: Entry) -> JSONValue {
        .object([
            "seq": .int(e.sequence), "requestId": .string(e.requestId), "method": .string(e.method), "target": .string(redactTarget(e.target)),
            "status": .int(Int64(e.status)), "durationMs": .double(Double(e.durationMicroseconds) / 1000), "timestampMs": .int(e.timestampMs),
            "request": .object(["headers": redactHeaders(e.requestHeaders), "body": displayBody(e.requestBody, total: e.requestBodyBytes),
                                "bytes": .int(Int64(e.requestBodyBytes)), "truncated": .bool(e.requestBody.count < e.requestBodyBytes)]),
            "response": .object(["headers": redactHeaders(e.responseHeaders), "body": displayBody(e.responseBody, total: e.responseBodyBytes),
                                 "bytes": .int(Int64(e.responseBodyBytes)), "truncated": .bool(e.responseBody.count < e.responseBodyBytes)]),
        ])
    }
}

/// The inspector's recording step: records each exchange in `log` once answered. It stands
/// around the router (`MiddlewareResponder`), so it also records what no route answers (404, 405).
public struct InspectorRequestRecorder: RouteMiddleware {
    let log: InspectorRequestLog
    let clock: @Sendable () -> Int64

    /// `nowMs`: Unix time in milliseconds (the domain's wall clock).
    public init(log: InspectorRequestLog, nowMs: @escaping @Sendable () -> Int64) {
        self.log = log
        clock = nowMs
    }

    /// A path the log never keeps (the probes, Engine.IO, the inspector itself) is passed on
    /// untimed: `record` would drop it.
    public func applies(to request: HTTPRequest) -> Bool { InspectorRequestLog.isRecorded(request.path) }

    public func handle(_ context: inout RequestContext, next: (inout RequestContext) async throws -> HTTPResponse) async throws -> HTTPResponse {
        guard applies(to: context.request) else { return try await next(&context) }
        let started = DispatchTime.now().uptimeNanoseconds
        let response = try await next(&context)
        if response.upgrade == nil {
            let micros = Int64((DispatchTime.now().uptimeNanoseconds - started) / 1000)
            log.record(context.request, response, durationMicroseconds: micros, timestampMs: clock())
        }
        return response
    }
}
