/// Size limits enforced by `HTTPParser`, each checked before the corresponding allocation.
public struct HTTPParserLimits: Sendable, Equatable {
    /// Longest request line (method SP target SP version, without CRLF). Exceeding it: 414.
    public var maxRequestLineBytes: Int = 8 * 1024
    /// Total bytes of the header section (and, separately, of a chunked trailer section),
    /// including each line's CRLF. Exceeding it: 431.
    public var maxHeaderBytes: Int = 16 * 1024
    /// Most header fields in a request (trailers counted separately). Exceeding it: 431.
    public var maxHeaderCount: Int = 100
    /// Largest request body (Content-Length, or the sum of chunk sizes). Exceeding it: 413.
    public var maxBodyBytes: Int = 1024 * 1024
    /// Longest chunk-size line including chunk extensions (RFC 9112 §7.1.1). Exceeding it: 400.
    public var maxChunkLineBytes: Int = 1024

    public init(maxRequestLineBytes: Int = 8 * 1024, maxHeaderBytes: Int = 16 * 1024, maxHeaderCount: Int = 100,
                maxBodyBytes: Int = 1024 * 1024, maxChunkLineBytes: Int = 1024) {
        self.maxRequestLineBytes = maxRequestLineBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxBodyBytes = maxBodyBytes
        self.maxChunkLineBytes = maxChunkLineBytes
    }
}

/// A request the parser refuses, with the status to answer. The connection must be closed after
/// answering: the framing can no longer be trusted (RFC 9112 §11.2).
public struct HTTPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public let status: Int
    public let reason: String
    public init(status: Int, reason: String) {
        self.status = status
        self.reason = reason
    }
    public var description: String { "\(status): \(reason)" }

    static func bad(_ reason: String) -> HTTPParseError { HTTPParseError(status: 400, reason: reason) }
}

/// HTTP version (RFC 9110 §2.5).
public struct HTTPVersion: Sendable, Hashable, CustomStringConvertible {
    public let major: Int
    public let minor: Int
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }
    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)
    public var description: String { "HTTP/\(major).\(minor)" }
}

/// A parsed request head.
public struct HTTPRequestHead: Sendable {
    public var method: HTTPMethod
    /// The request-target exactly as sent (RFC 9112 §3.2).
    public var target: String
    public var version: HTTPVersion
    public var headers: HTTPHeaders
    /// Whether the connection may stay open after this request (RFC 9112 §9.3).
    public var keepAlive: Bool
    /// `Expect: 100-continue` was sent (RFC 9110 §10.1.1).
    public var expectsContinue: Bool
}

/// What `HTTPParser.next()` produces.
public enum HTTPParserEvent: Sendable {
    /// The head of a request with `Expect: 100-continue` and a body is complete: send
    /// `HTTP/1.1 100 Continue` (RFC 9110 §10.1.1) and keep feeding.
    case expectContinue(HTTPRequestHead)
    /// A complete request. `trailers` holds a chunked body's trailer fields (RFC 9112 §7.1.2).
    case request(HTTPRequestHead, body: [UInt8], trailers: HTTPHeaders)
    /// The input is malformed or over a limit; answer `status` and close. The parser is dead.
    case error(HTTPParseError)
}

/// Where the parser is, for timeout decisions.
public enum HTTPParserProgress: Sendable, Equatable {
    /// Between requests, nothing of the next one buffered.
    case idle
    /// Part of a request head is buffered.
    case head
    /// The head is complete; the body is arriving.
    case body
}
