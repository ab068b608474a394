/// A pure HTTP/1.1 request parser (RFC 9112): bytes in, events out, no I/O.
///
/// `feed` appends bytes; `next()` returns the next event or nil when more input is needed.
/// Pipelined requests come out one at a time, in order. Bodies are fully buffered and bounded by
/// `HTTPParserLimits.maxBodyBytes`. The parser is strict: anything ambiguous about message framing
/// is an error (request smuggling defence, RFC 9112 §6.3 and §11.2).
public struct HTTPParser: Sendable {
    public let limits: HTTPParserLimits

    private enum State: Sendable {
        case requestLine
        case headers
        case body(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case failed
    }

    private var state: State = .requestLine
    private var buffer: [UInt8] = []
    private var cursor = 0

    // Request being assembled.
    private var method = HTTPMethod.GET
    private var target = ""
    private var version = HTTPVersion.http1_1
    private var headers = HTTPHeaders()
    private var sectionBytes = 0
    private var trailers = HTTPHeaders()
    private var body: [UInt8] = []
    private var head: HTTPRequestHead?
    private var continueEmitted = false

    public init(limits: HTTPParserLimits = HTTPParserLimits()) {
        self.limits = limits
    }

    /// Bytes buffered and not yet consumed by a returned event.
    public var bufferedBytes: Int { buffer.count - cursor }

    /// Whether the parser has failed (after returning `.error`).
    public var hasFailed: Bool { if case .failed = state { return true } else { return false } }

    /// Progress through the current request, for timeouts.
    public var progress: HTTPParserProgress {
        switch state {
        case .requestLine: return bufferedBytes == 0 ? .idle : .head
        case .headers: return .head
        case .failed: return .idle
        default: return .body
        }
    }

    /// Appends input.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Appends input.
    public mutating func feed(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { feed($0) }
    }

    /// Removes and returns every unconsumed byte (e.g. data following a protocol upgrade request).
    public mutating func takeRemainingBytes() -> [UInt8] {
        let rest = Array(buffer[cursor...])
        buffer.removeAll()
        cursor = 0
        return rest
    }

    private mutating func compact() {
        if cursor == 0 { return }
        if cursor == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 * 1024)
            cursor = 0
        } else if cursor >= 4096 || cursor * 2 >= buffer.count {
            buffer.removeSubrange(0..<cursor)
            cursor = 0
        }
    }

    /// The next event, or nil when more input is needed (or after an error).
    public mutating func next() -> HTTPParserEvent? {
        while true {
            let step: Step
            switch state {
            case .failed: return nil
            case .requestLine: step = parseRequestLine()
            case .headers: step = parseHeaderLine(trailer: false)
            case .body(let remaining): step = readBody(remaining)
            case .chunkSize: step = parseChunkSize()
            case .chunkData(let remaining): step = readChunkData(remaining)
            case .chunkDataEnd: step = parseChunkDataEnd()
            case .trailers: step = parseHeaderLine(trailer: true)
            }
            switch step {
            case .needMore: return nil
            case .progress: continue
            case .event(let event): return event
            case .fail(let error):
                state = .failed
                return .error(error)
            }
        }
    }

    private enum Step {
        case needMore
        case progress
        case event(HTTPParserEvent)
        case fail(HTTPParseError)
    }

    /// Index of the next LF at or after `from`, or nil.
    private func findLF(from: Int) -> Int? {
        buffer.withUnsafeBufferPointer { p -> Int? in
            guard let base = p.baseAddress else { return nil }
            let i = HTTPParser.scanForLF(UnsafeRawPointer(base), from: from, count: p.count)
            return i < p.count ? i : nil
        }
    }

    /// The index of the first LF at or after `from`, or `count`: eight bytes a step (a byte equal
    /// to 0x0A sets the top bit of `((w ^ 0x0A…) - 0x01…) & ~(w ^ 0x0A…)`; a borrow can only flag
    /// a byte above a true hit, and the byte loop then finds the exact one).
    @inline(__always)
    static func scanForLF(_ p: UnsafeRawPointer, from: Int, count n: Int) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101
        var i = from
        while i &+ 8 <= n {
            let x = p.loadUnaligned(fromByteOffset: i, as: UInt64.self) ^ (ones &* 0x0A)
            if (x &- ones) & ~x & (ones &* 0x80) != 0 { break }
            i &+= 8
        }
        while i < n, p.load(fromByteOffset: i, as: UInt8.self) != 0x0A { i &+= 1 }
        return i
    }

    /// True when bytes `from..<to` hold no character a field value forbids (RFC 9110 §5.5: NUL,
    /// CR, LF and the other controls but HTAB, and DEL). Eight bytes a step: a word with no byte
    /// below 0x20 and none equal to 0x7F is skipped whole; any other is checked byte by byte.
    @inline(__always)
    static func isValidFieldValue(_ p: UnsafeRawPointer, from: Int, to n: Int) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high = ones &* 0x80
        var i = from
        while i &+ 8 <= n {
            let w = p.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            let del = w ^ (ones &* 0x7F)
            if ((w &- ones &* 0x20) & ~w | (del &- ones) & ~del) & high != 0 { break }
            i &+= 8
        }
        while i < n {
            let c = p.load(fromByteOffset: i, as: UInt8.self)
            if (c < 0x20 && c != 0x09) || c == 0x7F { return false }
            i &+= 1
        }
        return true
    }

    // MARK: request line — RFC 9112 §3

    private mutating func parseRequestLine() -> Step {
        // RFC 9112 §2.2: a server SHOULD ignore at least one empty line (CRLF) before the request-line.
        while buffer.count - cursor >= 2 && buffer[cursor] == 0x0D && buffer[cursor + 1] == 0x0A {
            cursor += 2
        }
        if cursor < buffer.count && buffer[cursor] == 0x0A { return .fail(.bad("bare LF line ending")) }
        guard let lf = findLF(from: cursor) else {
            if buffer.count - cursor > limits.maxRequestLineBytes + 1 {
                return .fail(HTTPParseError(status: 414, reason: "request line too long"))
            }
            return .needMore
        }
        guard lf > cursor, buffer[lf - 1] == 0x0D else { return .fail(.bad("bare LF line ending")) }
        let lineEnd = lf - 1
        if lineEnd - cursor > limits.maxRequestLineBytes {
            return .fail(HTTPParseError(status: 414, reason: "request line too long"))
        }
        let start = cursor
        let result: HTTPParseError? = buffer.withUnsafeBytes { raw -> HTTPParseError? in
            let line = UnsafeRawBufferPointer(rebasing: raw[start..<lineEnd])
            // method SP request-target SP HTTP-version
            var i = 0
            while i < line.count && HTTPParser.isTokenChar(line[i]) { i += 1 }
            guard i > 0, i < line.count, line[i] == 0x20 else { return .bad("invalid method") }
            let methodBytes = UnsafeRawBufferPointer(rebasing: line[0..<i])
            i += 1
            let targetStart = i
            while i < line.count && line[i] > 0x20 && line[i] < 0x7F { i += 1 }
            guard i > targetStart, i < line.count, line[i] == 0x20 else { return .bad("invalid request target") }
            let targetBytes = UnsafeRawBufferPointer(rebasing: line[targetStart..<i])
            i += 1
            // HTTP-version = "HTTP" "/" DIGIT "." DIGIT (RFC 9112 §2.3)
            guard line.count - i == 8,
                  line[i] == 0x48, line[i + 1] == 0x54, line[i + 2] == 0x54, line[i + 3] == 0x50, line[i + 4] == 0x2F,
                  HTTPParser.isDigit(line[i + 5]), line[i + 6] == 0x2E, HTTPParser.isDigit(line[i + 7])
            else { return .bad("invalid HTTP version") }
            let major = Int(line[i + 5] - 0x30), minor = Int(line[i + 7] - 0x30)
            if major != 1 { return HTTPParseError(status: 505, reason: "HTTP version not supported") }
            method = HTTPMethod.fromBytes(methodBytes)
            target = String(decoding: targetBytes, as: UTF8.self)
            version = HTTPVersion(major: 1, minor: minor)
            // RFC 9112 §3.2: origin-form, absolute-form, authority-form (CONNECT), asterisk-form (OPTIONS).
            let first = targetBytes[0]
            if first == 0x2F { return nil }
            if targetBytes.count == 1 && first == 0x2A && method == .OPTIONS { return nil }
            if method == .CONNECT { return nil }
            if HTTPParser.hasHTTPSchemePrefix(targetBytes) { return nil }
            return .bad("invalid request target")
        }
        if let error = result { return .fail(error) }
        cursor = lf + 1
        headers = HTTPHeaders(capacity: 8)  // one allocation for a usual request's fields, not one per doubling
        sectionBytes = 0
        state = .headers
        return .progress
    }

    // MARK: header and trailer fields — RFC 9112 §5, RFC 9110 §5.5

    private mutating func parseHeaderLine(trailer: Bool) -> Step {
        guard let lf = findLF(from: cursor) else {
            if sectionBytes + (buffer.count - cursor) > limits.maxHeaderBytes {
                return .fail(HTTPParseError(status: 431, reason: "header section too large"))
            }
            return .needMore
        }
        sectionBytes += lf + 1 - cursor
        if sectionBytes > limits.maxHeaderBytes {
            return .fail(HTTPParseError(status: 431, reason: "header section too large"))
        }
        guard lf > cursor, buffer[lf - 1] == 0x0D else { return .fail(.bad("bare LF line ending")) }
        let lineStart = cursor
        let lineEnd = lf - 1
        cursor = lf + 1
        if lineEnd == lineStart {
            return trailer ? completeRequest() : headComplete()
        }
        // RFC 9112 §5.2: obs-fold in a request MUST be rejected with 400.
        let first = buffer[lineStart]
        if first == 0x20 || first == 0x09 { return .fail(.bad("obsolete line folding")) }
        let count = trailer ? trailers.count : headers.count
        if count >= limits.maxHeaderCount {
            return .fail(HTTPParseError(status: 431, reason: "too many header fields"))
        }
        let parsed: Result<(String, String), HTTPParseError> = buffer.withUnsafeBytes { raw in
            let line = UnsafeRawBufferPointer(rebasing: raw[lineStart..<lineEnd])
            var i = 0
            while i < line.count && HTTPParser.isTokenChar(line[i]) { i += 1 }
            // RFC 9112 §5.1: no whitespace between field name and colon.
            guard i > 0, i < line.count, line[i] == 0x3A else { return .failure(.bad("invalid header field name")) }
            let name = String(decoding: UnsafeRawBufferPointer(rebasing: line[0..<i]), as: UTF8.self)
            var s = i + 1, e = line.count
            while s < e && (line[s] == 0x20 || line[s] == 0x09) { s += 1 }
            while e > s && (line[e - 1] == 0x20 || line[e - 1] == 0x09) { e -= 1 }
            // RFC 9110 §5.5: field-value = *field-content; NUL, CR, LF are never allowed;
            // other controls except HTAB are rejected as well.
            if let base = line.baseAddress, !HTTPParser.isValidFieldValue(base, from: s, to: e) {
                return .failure(.bad("invalid character in header value"))
            }
            return .success((name, String(decoding: UnsafeRawBufferPointer(rebasing: line[s..<e]), as: UTF8.self)))
        }
        switch parsed {
        case .failure(let error): return .fail(error)
        case .success(let (name, value)):
            if trailer { trailers.add(name, value) } else { headers.add(name, value) }
            return .progress
        }
    }

    // MARK: message body length — RFC 9112 §6.3

    private mutating func headComplete() -> Step {
        let isHTTP10 = version.minor == 0
        let transferEncodings = headers.values(for: "Transfer-Encoding")
        let contentLengths = headers.values(for: "Content-Length")

        // RFC 9112 §3.2: a 1.1 request without exactly one Host is a 400.
        let hostCount = headers.count(of: "Host")
        if !isHTTP10 && hostCount != 1 { return .fail(.bad(hostCount == 0 ? "missing Host header" : "duplicate Host header")) }
        if isHTTP10 && hostCount > 1 { return .fail(.bad("duplicate Host header")) }
        // RFC 9112 §3.2: an invalid Host field value is a 400 (grammar in HTTPParser+Host.swift).
        if let host = headers["Host"], !HTTPParser.isValidHost(host) { return .fail(.bad("invalid Host header")) }

        var chunked = false
        var contentLength = 0
        if !transferEncodings.isEmpty {
            // RFC 9112 §6.1: TE in 1.0 means faulty framing; TE with CL is a smuggling vector (§6.3 (3)).
            if isHTTP10 { return .fail(.bad("Transfer-Encoding in an HTTP/1.0 request")) }
            if !contentLengths.isEmpty { return .fail(.bad("both Content-Length and Transfer-Encoding")) }
            let codings = headers.tokens(for: "Transfer-Encoding")
            if codings.isEmpty { return .fail(.bad("empty Transfer-Encoding")) }
            if codings.contains(where: { $0 != "chunked" }) {
                // RFC 9112 §6.1 permits 501 here; we answer 400 and close (docs/decisions.md): without a coding
                // we can decode, the body cannot be framed, so the rest of the stream is unusable.
                return .fail(.bad("unsupported transfer coding"))
            }
            // Only a single, final chunked is valid (RFC 9112 §6.1, §7).
            if codings.count != 1 { return .fail(.bad("chunked applied more than once")) }
            chunked = true
        } else if !contentLengths.isEmpty {
            if contentLengths.count > 1 { return .fail(.bad("multiple Content-Length headers")) }
            guard let n = HTTPParser.parseContentLength(contentLengths[0]) else {
                return .fail(.bad("invalid Content-Length"))
            }
            if n > limits.maxBodyBytes { return .fail(HTTPParseError(status: 413, reason: "body too large")) }
            contentLength = n
        }

        let connection = headers.tokens(for: "Connection")
        let keepAlive = isHTTP10 ? connection.contains("keep-alive") : !connection.contains("close")
        var expectsContinue = false
        if let expect = headers["Expect"] {
            if asciiCaseInsensitiveEquals(expect.trimmingOWS(), "100-continue") {
                expectsContinue = !isHTTP10
            } else {
                return .fail(HTTPParseError(status: 417, reason: "unsupported expectation"))
            }
        }
        let head = HTTPRequestHead(method: method, target: target, version: version, headers: headers,
                                   keepAlive: keepAlive, expectsContinue: expectsContinue)
        self.head = head
        body = []
        trailers = HTTPHeaders()
        continueEmitted = false
        if chunked {
            state = .chunkSize
        } else if contentLength > 0 {
            body.reserveCapacity(contentLength)
            state = .body(remaining: contentLength)
        } else {
            return completeRequest()
        }
        if expectsContinue {
            continueEmitted = true
            return .event(.expectContinue(head))
        }
        return .progress
    }

    private mutating func readBody(_ remaining: Int) -> Step {
        guard let left = takeBodyBytes(remaining) else { return .needMore }
        if left == 0 { return completeRequest() }
        state = .body(remaining: left)
        return .needMore
    }

    /// Moves up to `remaining` buffered bytes into the body (a Content-Length body or one chunk's
    /// data): nil when nothing is buffered, else how many of `remaining` are still to come.
    private mutating func takeBodyBytes(_ remaining: Int) -> Int? {
        let available = buffer.count - cursor
        if available == 0 { return nil }
        let n = min(available, remaining)
        body.append(contentsOf: buffer[cursor..<(cursor + n)])
        cursor += n
        return remaining - n
    }

    // MARK: chunked transfer coding — RFC 9112 §7.1

    private mutating func parseChunkSize() -> Step {
        guard let lf = findLF(from: cursor) else {
            if buffer.count - cursor > limits.maxChunkLineBytes { return .fail(.bad("chunk size line too long")) }
            return .needMore
        }
        if lf - cursor > limits.maxChunkLineBytes { return .fail(.bad("chunk size line too long")) }
        guard lf > cursor, buffer[lf - 1] == 0x0D else { return .fail(.bad("bare LF line ending")) }
        let lineEnd = lf - 1
        var i = cursor
        var size = 0
        var digits = 0
        while i < lineEnd, let d = HTTPParser.hexValue(buffer[i]) {
            digits += 1
            if digits > 15 { return .fail(.bad("invalid chunk size")) }
            size = size << 4 | d
            i += 1
        }
        if digits == 0 { return .fail(.bad("invalid chunk size")) }
        // chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] ): accepted, ignored.
        var j = i
        while j < lineEnd && (buffer[j] == 0x20 || buffer[j] == 0x09) { j += 1 }
        if j < lineEnd {
            guard buffer[j] == 0x3B else { return .fail(.bad("invalid chunk size")) }
            var k = j + 1
            while k < lineEnd {
                let c = buffer[k]
                if (c < 0x20 && c != 0x09) || c == 0x7F { return .fail(.bad("invalid chunk extension")) }
                k += 1
            }
        }
        cursor = lf + 1
        if size == 0 {
            sectionBytes = 0
            state = .trailers
            return .progress
        }
        if body.count + size > limits.maxBodyBytes { return .fail(HTTPParseError(status: 413, reason: "body too large")) }
        state = .chunkData(remaining: size)
        return .progress
    }

    private mutating func readChunkData(_ remaining: Int) -> Step {
        guard let left = takeBodyBytes(remaining) else { return .needMore }
        if left == 0 {
            state = .chunkDataEnd
            return .progress
        }
        state = .chunkData(remaining: left)
        return .needMore
    }

    private mutating func parseChunkDataEnd() -> Step {
        if buffer.count - cursor < 2 {
            if buffer.count - cursor == 1 && buffer[cursor] != 0x0D { return .fail(.bad("missing CRLF after chunk data")) }
            return .needMore
        }
        guard buffer[cursor] == 0x0D, buffer[cursor + 1] == 0x0A else { return .fail(.bad("missing CRLF after chunk data")) }
        cursor += 2
        state = .chunkSize
        return .progress
    }

    private mutating func completeRequest() -> Step {
        guard let head else { return .fail(.bad("internal parser state")) }
        let event = HTTPParserEvent.request(head, body: body, trailers: trailers)
        self.head = nil
        body = []
        trailers = HTTPHeaders()
        headers = HTTPHeaders()
        state = .requestLine
        return .event(event)
    }

    // MARK: character classes

    /// tchar (RFC 9110 §5.6.2).
    static let tokenTable: [Bool] = {
        var t = [Bool](repeating: false, count: 256)
        for c in UInt8(0x30)...0x39 { t[Int(c)] = true }
        for c in UInt8(0x41)...0x5A { t[Int(c)] = true }
        for c in UInt8(0x61)...0x7A { t[Int(c)] = true }
        for c in "!#$%&'*+-.^_`|~".utf8 { t[Int(c)] = true }
        return t
    }()

    @inline(__always) static func isTokenChar(_ c: UInt8) -> Bool { tokenTable[Int(c)] }
    @inline(__always) static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    @inline(__always) static func hexValue(_ c: UInt8) -> Int? {
        switch c {
        case 0x30...0x39: return Int(c - 0x30)
        case 0x41...0x46: return Int(c - 0x41 + 10)
        case 0x61...0x66: return Int(c - 0x61 + 10)
        default: return nil
        }
    }

    /// Content-Length = 1*DIGIT (RFC 9110 §8.6); nil on anything else or overflow.
    static func parseContentLength(_ value: String) -> Int? {
        var n = 0
        var digits = 0
        for c in value.utf8 {
            guard isDigit(c) else { return nil }
            digits += 1
            if digits > 15 { return nil }
            n = n * 10 + Int(c - 0x30)
        }
        return digits > 0 ? n : nil
    }

    static func hasHTTPSchemePrefix(_ b: UnsafeRawBufferPointer) -> Bool {
        func lower(_ c: UInt8) -> UInt8 { (c >= 0x41 && c <= 0x5A) ? c | 0x20 : c }
        let http: [UInt8] = Array("http://".utf8), https: [UInt8] = Array("https://".utf8)
        for prefix in [http, https] where b.count > prefix.count {
            var ok = true
            for (k, p) in prefix.enumerated() where lower(b[k]) != p { ok = false; break }
            if ok { return true }
        }
        return false
    }
}
