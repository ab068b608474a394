import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP exchange with the server, through `URLSession`'s completion-handler API (available
/// on every OS version a test target may deploy to, and in swift-corelibs-foundation).
struct HTTPTransport: Sendable {
    enum Method: String, Sendable { case get = "GET", post = "POST", patch = "PATCH", delete = "DELETE" }

    let base: URL
    let session: URLSession
    /// Sent as `X-TouchSync-Test` on the test-mode routes (`/api/test/*`): the server's
    /// `testModeToken` when it has one, else any value (the server then wants the header on changes,
    /// which a web page cannot send cross-site).
    var testModeToken: String? = nil

    struct Response: Sendable {
        let status: Int
        let body: Data
        let headers: [String: String]
    }

    /// Sends one request; `timeout` is the whole exchange's bound (long-polls pass their wait plus a margin).
    func send(_ method: Method, _ path: String, query: [(String, String)] = [], token: String? = nil, body: Data? = nil,
              headers: [String: String] = [:], timeout: TimeInterval = 30) async throws -> Response {
        var components = URLComponents()
        components.path = path
        if !query.isEmpty { components.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) } }
        guard let relative = components.url(relativeTo: base), let url = URL(string: relative.absoluteString) else {
            throw TouchSyncError.notConfigured("cannot form a URL from \(base) and \(path)")
        }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = method.rawValue
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if path.hasPrefix("/api/test/") { request.setValue(testModeToken ?? "1", forHTTPHeaderField: "X-TouchSync-Test") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let session = self.session
        return try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: TouchSyncError.unreachable(url: url, underlying: error.localizedDescription))
                    return
                }
                guard let http = response as? HTTPURLResponse else {
                    continuation.resume(throwing: TouchSyncError.unreachable(url: url, underlying: "no HTTP response"))
                    return
                }
                var fields: [String: String] = [:]
                for (k, v) in http.allHeaderFields { fields[String(describing: k).lowercased()] = String(describing: v) }
                continuation.resume(returning: Response(status: http.statusCode, body: data ?? Data(), headers: fields))
            }.resume()
        }
    }
}

extension HTTPTransport.Response {
    /// The server's dates: ISO 8601 UTC with second precision (`2025-11-22T10:00:00Z`).
    static func decoder() -> JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .iso8601
        return d
    }

    /// Throws `TouchSyncError.api` unless the status is 2xx.
    func requireSuccess(route: String) throws {
        guard (200..<300).contains(status) else { throw TouchSyncError.api(APIFailure(route: route, status: status, body: body)) }
    }

    /// The whole body as `T`, after `requireSuccess`.
    func decode<T: Decodable>(_ type: T.Type, route: String) throws -> T {
        try requireSuccess(route: route)
        do {
            return try Self.decoder().decode(T.self, from: body)
        } catch {
            throw TouchSyncError.decoding(route: route, type: String(describing: T.self), detail: String(describing: error),
                                          body: String(decoding: body.prefix(2000), as: UTF8.self))
        }
    }

    /// `data` of a `{"data": …}` (or `{"success", "message", "data"}`) envelope as `T`.
    func decodeData<T: Decodable>(_ type: T.Type, route: String) throws -> T {
        try decode(DataEnvelope<T>.self, route: route).data
    }
}

/// `{"data": T}`; the mobile envelope's `success` and `message` are ignored here.
struct DataEnvelope<T: Decodable>: Decodable {
    let data: T
}
