import Synchronization
import TSSockets

/// Encodes response heads into a reused buffer (RFC 9112 §4, §6).
struct HTTPResponseEncoder {
    var buffer: [UInt8] = []
    private var dateSecond: Int = -1
    private var dateBytes: [UInt8] = []

    init() {}  // no up-front capacity: idle connections stay small; the first response sizes it

    /// Encodes status line, headers and (unless `omitBody`) the body into `buffer`. With
    /// `omitBody`, `Content-Length` still gives the body's size (HEAD, or a body the caller
    /// writes as a separate part).
    /// The server's own `Content-Length`, `Date`, `X-Request-Id` and `Connection` win over handler values.
    mutating func encode(_ response: HTTPResponse, requestID: String, keepAlive: Bool, http10: Bool,
                         omitBody: Bool, isUpgrade: Bool = false) {
        buffer.removeAll(keepingCapacity: true)
        appendStatusLine(response.status)
        var hasDate = false
        for field in response.headers.fields {
            if asciiCaseInsensitiveEquals(field.name, "Content-Length")
                || asciiCaseInsensitiveEquals(field.name, "Transfer-Encoding")
                || asciiCaseInsensitiveEquals(field.name, "X-Request-Id") {
                continue
            }
            if !isUpgrade && asciiCaseInsensitiveEquals(field.name, "Connection") { continue }
            guard HTTPResponseEncoder.isSafeHeader(field.name, field.value) else { continue }
            if asciiCaseInsensitiveEquals(field.name, "Date") { hasDate = true }
            append(field.name)
            buffer.append(0x3A); buffer.append(0x20)
            append(field.value)
            crlf()
        }
        if !HTTPStatus.forbidsBody(response.status) {
            append("Content-Length: ")
            appendDecimal(response.body.count)
            crlf()
        }
        if !hasDate {
            append("Date: ")
            appendDate()
            crlf()
        }
        append("X-Request-Id: ")
        append(requestID)
        crlf()
        if !isUpgrade {
            if !keepAlive {
                append("Connection: close\r\n")
            } else if http10 {
                append("Connection: keep-alive\r\n")
            }
        }
        crlf()
        if !omitBody && !HTTPStatus.forbidsBody(response.status) {
            buffer.append(contentsOf: response.body)
        }
    }

    private mutating func appendStatusLine(_ status: Int) {
        append("HTTP/1.1 ")
        appendDecimal(status)
        buffer.append(0x20)
        append(HTTPStatus.reasonPhrase(status))
        crlf()
    }

    @inline(__always) private mutating func crlf() { buffer.append(0x0D); buffer.append(0x0A) }

    @inline(__always) private mutating func append(_ s: String) {
        var s = s
        s.withUTF8 { buffer.append(contentsOf: $0) }
    }

    private mutating func appendDecimal(_ value: Int) {
        if value == 0 { buffer.append(0x30); return }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = value, count = 0
        withUnsafeMutableBytes(of: &digits) { d in
            while n > 0 && count < 20 {
                d[count] = UInt8(0x30 + n % 10)
                n /= 10
                count += 1
            }
            while count > 0 {
                count -= 1
                buffer.append(d[count])
            }
        }
    }

    private mutating func appendDate() {
        let now = Int(time(nil))
        if now != dateSecond {
            dateSecond = now
            dateBytes = Array(HTTPDate.imfFixdate(epochSeconds: now).utf8)
        }
        buffer.append(contentsOf: dateBytes)
    }

    /// Rejects names that are not tokens and values with CR, LF or NUL (header injection).
    /// Native strings are read as their UTF-8 buffers: the `UTF8View`'s indices cost about 36
    /// instructions a byte here, about 5 % of a `/health` request.
    static func isSafeHeader(_ name: String, _ value: String) -> Bool {
        if name.isEmpty { return false }
        let nameIsToken = name.utf8.withContiguousStorageIfAvailable { b in
            for c in b where !HTTPParser.isTokenChar(c) { return false }
            return true
        } ?? name.utf8.allSatisfy(HTTPParser.isTokenChar)
        guard nameIsToken else { return false }
        let breaksLine: (UInt8) -> Bool = { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
        return !(value.utf8.withContiguousStorageIfAvailable { $0.contains(where: breaksLine) } ?? value.utf8.contains(where: breaksLine))
    }
}

/// IMF-fixdate (RFC 9110 §5.6.7), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
enum HTTPDate {
    static func imfFixdate(epochSeconds: Int) -> String {
        var t = time_t(epochSeconds)
        var tm = tm()
        gmtime_r(&t, &tm)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(days[Int(tm.tm_wday)]), \(two(tm.tm_mday)) \(months[Int(tm.tm_mon)]) \(1900 + Int(tm.tm_year)) "
            + "\(two(tm.tm_hour)):\(two(tm.tm_min)):\(two(tm.tm_sec)) GMT"
    }

    static func now() -> String { imfFixdate(epochSeconds: Int(time(nil))) }
}

/// Request ids (X-Request-Id).
enum RequestID {
    /// Chosen once per process, so ids differ between runs.
    private static let key: UInt64 = {
        var rng = SystemRandomNumberGenerator()
        return rng.next()
    }()
    private static let counter = Atomic<UInt64>(0)

    /// 16 lowercase hex characters, distinct for every request of the process: a counter plus the
    /// process's random key, through a bijection of 64-bit integers (splitmix64's finalizer: each
    /// step is invertible), so no two requests share an id and consecutive ids look unrelated.
    /// An id names a request in the logs; it is no credential, so it needs no fresh random bytes
    /// (a `getrandom(2)` call per request was one system call in four of a keep-alive `/health`).
    static func generate() -> String {
        let v = mix(counter.wrappingAdd(1, ordering: .relaxed).newValue &+ key)
        // Written straight into the string's storage: one allocation per request, not three.
        return String(unsafeUninitializedCapacity: 16) { out in
            for i in 0..<16 {
                let nibble = UInt8(truncatingIfNeeded: (v >> (UInt64(i) * 4)) & 0xF)
                out[i] = nibble < 10 ? 0x30 + nibble : 0x57 + nibble  // 0-9, a-f
            }
            return 16
        }
    }

    static func mix(_ x: UInt64) -> UInt64 {
        var z = x
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// An incoming id is echoed when it is 1–128 characters of `[A-Za-z0-9._:-]`.
    static func isSane(_ id: String) -> Bool {
        let u = id.utf8
        guard !u.isEmpty, u.count <= 128 else { return false }
        for c in u {
            switch c {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2E, 0x5F, 0x3A, 0x2D: continue
            default: return false
            }
        }
        return true
    }
}
