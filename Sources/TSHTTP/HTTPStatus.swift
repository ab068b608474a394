/// Status code helpers (RFC 9110 §15).
public enum HTTPStatus {
    /// The reason phrase for `code` ("Unknown" for unregistered codes).
    public static func reasonPhrase(_ code: Int) -> String {
        switch code {
        case 100: return "Continue"
        case 101: return "Switching Protocols"
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 303: return "See Other"
        case 304: return "Not Modified"
        case 307: return "Temporary Redirect"
        case 308: return "Permanent Redirect"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 406: return "Not Acceptable"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 411: return "Length Required"
        case 412: return "Precondition Failed"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 415: return "Unsupported Media Type"
        case 417: return "Expectation Failed"
        case 422: return "Unprocessable Content"
        case 426: return "Upgrade Required"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        case 505: return "HTTP Version Not Supported"
        default: return "Unknown"
        }
    }

    /// Whether a response with this status never has content (RFC 9110 §6.4.1: 1xx, 204, 304).
    public static func forbidsBody(_ code: Int) -> Bool {
        (100..<200).contains(code) || code == 204 || code == 304
    }

    /// The contract error code used for a protocol-level status.
    public static func errorCode(_ code: Int) -> String {
        switch code {
        case 400: return "BAD_REQUEST"
        case 401: return "UNAUTHORIZED"
        case 403: return "FORBIDDEN"
        case 404: return "NOT_FOUND"
        case 405: return "METHOD_NOT_ALLOWED"
        case 408: return "REQUEST_TIMEOUT"
        case 409: return "CONFLICT"
        case 413: return "PAYLOAD_TOO_LARGE"
        case 414: return "URI_TOO_LONG"
        case 415: return "UNSUPPORTED_MEDIA_TYPE"
        case 417: return "EXPECTATION_FAILED"
        case 429: return "RATE_LIMITED"
        case 431: return "HEADERS_TOO_LARGE"
        case 500: return "INTERNAL"
        case 501: return "NOT_IMPLEMENTED"
        case 503: return "SERVICE_UNAVAILABLE"
        case 505: return "HTTP_VERSION_NOT_SUPPORTED"
        default: return "HTTP_\(code)"
        }
    }
}
