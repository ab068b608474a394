import CCurl

/// One HTTP/2 POST at a time through a libcurl easy handle, which keeps its connection to the
/// APNs host open between requests (APNs asks providers to reuse connections).
///
/// Blocking: used only from `APNsProvider`'s own serial queue, never from an event loop or the
/// cooperative pool. `@unchecked Sendable` invariant: `handle` is touched only from that queue
/// (the provider serializes every call), and freed in `deinit`.
final class APNsTransport: @unchecked Sendable {
    struct Response {
        var status: Int
        var body: [UInt8]
        var headers: [(String, String)]
    }

    struct TransportError: Error, CustomStringConvertible {
        let description: String
    }

    /// Collects the body and header lines; handed to curl's callbacks as their userdata.
    final class Sink {
        var body: [UInt8] = []
        var headers: [(String, String)] = []
        let maxBytes: Int
        init(maxBytes: Int) { self.maxBytes = maxBytes }
    }

    private let handle: UnsafeMutableRawPointer
    let timeoutMs: Int
    /// `https://…` negotiates HTTP/2 with ALPN; `http://…` (local tests only) speaks HTTP/2 with
    /// prior knowledge (RFC 9113 §3.3), as APNs itself accepts no cleartext.
    let priorKnowledge: Bool
    /// A CA bundle to verify the host with instead of the system's (setting `apns.caFile`).
    let caFile: String?

    static let globalInit: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    init(priorKnowledge: Bool, timeoutMs: Int, caFile: String? = nil) throws {
        _ = Self.globalInit
        guard ts_curl_has_http2() != 0 else { throw TransportError(description: "this libcurl has no HTTP/2 support (APNs needs it): install libcurl built with nghttp2") }
        guard let h = curl_easy_init() else { throw TransportError(description: "curl_easy_init failed") }
        handle = h
        self.timeoutMs = timeoutMs
        self.priorKnowledge = priorKnowledge
        self.caFile = caFile
    }

    deinit { curl_easy_cleanup(handle) }

    /// POSTs `body` to `url` with `headers`; a transport failure (no connection, timeout) throws.
    func post(url: String, headers: [(String, String)], body: [UInt8]) throws -> Response {
        curl_easy_reset(handle)
        var list: UnsafeMutablePointer<curl_slist>?
        for (k, v) in headers { list = curl_slist_append(list, "\(k): \(v)") }
        // No "Expect: 100-continue" round trip.
        list = curl_slist_append(list, "Expect:")
        defer { curl_slist_free_all(list) }
        let sink = Sink(maxBytes: 64 * 1024)
        let box = Unmanaged.passRetained(sink)
        defer { box.release() }

        let version = priorKnowledge ? CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE : CURL_HTTP_VERSION_2TLS
        var rc = ts_curl_setopt_string(handle, CURLOPT_URL, url)
        if rc == CURLE_OK { rc = ts_curl_setopt_long(handle, CURLOPT_HTTP_VERSION, version) }
        if rc == CURLE_OK { rc = ts_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1) }
        // Cleartext prior knowledge is for local test servers only; Debian's libcurl 7.88 fails to
        // reuse such a connection ("Error in the HTTP2 framing layer"), so each request opens its own.
        if rc == CURLE_OK && priorKnowledge { rc = ts_curl_setopt_long(handle, CURLOPT_FORBID_REUSE, 1) }
        if rc == CURLE_OK, let caFile { rc = ts_curl_setopt_string(handle, CURLOPT_CAINFO, caFile) }
        if rc == CURLE_OK { rc = ts_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, timeoutMs) }
        if rc == CURLE_OK { rc = ts_curl_setopt_long(handle, CURLOPT_POST, 1) }
        if rc == CURLE_OK { rc = ts_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, list) }
        if rc == CURLE_OK { rc = ts_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, box.toOpaque()) }
        if rc == CURLE_OK { rc = ts_curl_setopt_callback(handle, CURLOPT_WRITEFUNCTION, { data, size, count, user in
            let sink = Unmanaged<Sink>.fromOpaque(user!).takeUnretainedValue()
            let n = size * count
            if let data, sink.body.count < sink.maxBytes {
                data.withMemoryRebound(to: UInt8.self, capacity: n) { sink.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: min(n, sink.maxBytes - sink.body.count))) }
            }
            return n
        }) }
        if rc == CURLE_OK { rc = ts_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, box.toOpaque()) }
        if rc == CURLE_OK { rc = ts_curl_setopt_callback(handle, CURLOPT_HEADERFUNCTION, { data, size, count, user in
            let sink = Unmanaged<Sink>.fromOpaque(user!).takeUnretainedValue()
            let n = size * count
            if let data, sink.headers.count < 64 {
                let line = data.withMemoryRebound(to: UInt8.self, capacity: n) { String(decoding: UnsafeBufferPointer(start: $0, count: n), as: UTF8.self) }
                if let colon = line.firstIndex(of: ":") {
                    let name = line[..<colon].lowercased()
                    let value = line[line.index(after: colon)...].trimmingCharacters(in: [" ", "\r", "\n"])
                    sink.headers.append((name, value))
                }
            }
            return n
        }) }
        guard rc == CURLE_OK else { throw TransportError(description: "curl_easy_setopt: \(String(cString: curl_easy_strerror(rc)))") }

        let performed: CURLcode = body.withUnsafeBufferPointer { buf in
            var r = ts_curl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, buf.count)
            if r == CURLE_OK { r = ts_curl_setopt_pointer(handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: buf.baseAddress)) }
            if r == CURLE_OK { r = curl_easy_perform(handle) }
            return r
        }
        guard performed == CURLE_OK else { throw TransportError(description: String(cString: curl_easy_strerror(performed))) }
        var status = 0
        _ = ts_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return Response(status: status, body: sink.body, headers: sink.headers)
    }
}

extension Substring {
    func trimmingCharacters(in set: Set<Character>) -> String {
        var s = self
        while let f = s.first, set.contains(f) { s.removeFirst() }
        while let l = s.last, set.contains(l) { s.removeLast() }
        return String(s)
    }
}
