/// Why a document is not JSON, with the byte offset where parsing stopped.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Not JSON (RFC 8259 grammar, UTF-8, number range).
        case syntax
        /// Nesting of arrays/objects deeper than the parser's `maxDepth`.
        case tooDeep
        /// A repeated object key where `rejectDuplicateKeys` was asked for.
        case duplicateKey
    }
    public let offset: Int
    public let reason: String
    public let kind: Kind
    public init(offset: Int, reason: String, kind: Kind = .syntax) {
        self.offset = offset
        self.reason = reason
        self.kind = kind
    }
    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

/// A strict RFC 8259 parser over UTF-8 bytes: a pure function from bytes to a `JSONValue`.
/// Nesting deeper than `maxDepth` is refused rather than recursed into. RFC 8259 §4 leaves
/// duplicate object keys to the receiver: by default the last one wins; `rejectDuplicateKeys`
/// refuses the document instead (for signed headers, where a parser differential matters).
///
/// Every step is linear in the input: each byte is looked at a bounded number of times, strings
/// are validated once, and object members go into a `JSONObject`, whose key index keeps the
/// duplicate-key handling O(1) per member (a 100,000-key object parses in O(n)).
public struct JSONParser {
    public static let defaultMaxDepth = 256

    private let bytes: UnsafeBufferPointer<UInt8>
    private var i = 0
    private let maxDepth: Int
    private let rejectDuplicateKeys: Bool

    private init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int, rejectDuplicateKeys: Bool) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        self.rejectDuplicateKeys = rejectDuplicateKeys
    }

    public static func parse(_ buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int = defaultMaxDepth,
                             rejectDuplicateKeys: Bool = false) throws(JSONParseError) -> JSONValue {
        var p = JSONParser(buffer, maxDepth: maxDepth, rejectDuplicateKeys: rejectDuplicateKeys)
        p.skipWhitespace()
        let v = try p.parseValue(depth: 0)
        p.skipWhitespace()
        if p.i != p.bytes.count { throw p.fail("trailing characters") }
        return v
    }

    private func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: i, reason: reason) }

    private mutating func skipWhitespace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard i < bytes.count else { throw fail("unexpected end") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character")
        }
    }

    private mutating func expectLiteral(_ word: StaticString) throws(JSONParseError) {
        let n = word.utf8CodeUnitCount
        guard i + n <= bytes.count else { throw fail("unexpected end") }
        let w = word.utf8Start
        for k in 0..<n where bytes[i + k] != w[k] { throw fail("invalid literal") }
        i += n
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        if depth > maxDepth { throw JSONParseError(offset: i, reason: "nesting deeper than \(maxDepth)", kind: .tooDeep) }
        i += 1
        // Members are collected in order and deduplicated once at the end (JSONObject(parsed:)),
        // unless duplicates must be refused with their offset (then checked as they come).
        var members: [(key: String, value: JSONValue)] = []
        var seen = JSONObject()
        skipWhitespace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(JSONObject()) }
        while true {
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected object key") }
            let keyOffset = i
            let key = try parseString()
            if rejectDuplicateKeys {
                if seen[key] != nil { throw JSONParseError(offset: keyOffset, reason: "duplicate key", kind: .duplicateKey) }
                seen.appendUnchecked(key, .null)
            }
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            i += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            members.append((key, value))
            skipWhitespace()
            guard i < bytes.count else { throw fail("unexpected end") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(JSONObject(parsed: members)) }
            throw fail("expected ',' or '}'")
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        if depth > maxDepth { throw JSONParseError(offset: i, reason: "nesting deeper than \(maxDepth)", kind: .tooDeep) }
        i += 1
        var arr: [JSONValue] = []
        skipWhitespace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(arr) }
        while true {
            skipWhitespace()
            arr.append(try parseValue(depth: depth))
            skipWhitespace()
            guard i < bytes.count else { throw fail("unexpected end") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(arr) }
            throw fail("expected ',' or ']'")
        }
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = i
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < bytes.count, isDigit(bytes[i]) else { throw fail("invalid number") }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
            if i < bytes.count, isDigit(bytes[i]) { throw fail("leading zero") }
        } else {
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        }
        var isInteger = true
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            guard i < bytes.count, isDigit(bytes[i]) else { throw fail("invalid fraction") }
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            isInteger = false
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard i < bytes.count, isDigit(bytes[i]) else { throw fail("invalid exponent") }
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        }
        if isInteger && i - start <= 18 {
            var v: Int64 = 0
            var k = start
            let negative = bytes[k] == UInt8(ascii: "-")
            if negative { k += 1 }
            while k < i { v = v * 10 + Int64(bytes[k] - 0x30); k += 1 }
            return .int(negative ? -v : v)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        if isInteger, let v = Int64(text) { return .int(v) }
        guard let d = Double(text), d.isFinite else { throw JSONParseError(offset: start, reason: "number out of range") }
        return .double(d)
    }

    private func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    private mutating func parseString() throws(JSONParseError) -> String {
        i += 1  // opening quote
        let start = i
        // Fast path: no escapes.
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<i])
                i += 1
                guard let s = String(validating: slice, as: UTF8.self) else { throw fail("invalid UTF-8 in string") }
                return s
            }
            if b == UInt8(ascii: "\\") { break }
            if b < 0x20 { throw fail("control character in string") }
            i += 1
        }
        var out = Array(UnsafeBufferPointer(rebasing: bytes[start..<i]))
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                i += 1
                guard let s = String(validating: out, as: UTF8.self) else { throw fail("invalid UTF-8 in string") }
                return s
            }
            if b < 0x20 { throw fail("control character in string") }
            if b != UInt8(ascii: "\\") { out.append(b); i += 1; continue }
            i += 1
            guard i < bytes.count else { break }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try parseHex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    // RFC 8259 §7: a surrogate pair is written as two \u escapes.
                    guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                        throw fail("lone high surrogate")
                    }
                    i += 2
                    let low = try parseHex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail("invalid low surrogate") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw fail("lone low surrogate")
                }
                guard let u = Unicode.Scalar(scalar) else { throw fail("invalid escape") }
                Self.appendUTF8(u, to: &out)
            default: throw fail("invalid escape")
            }
        }
        throw fail("unterminated string")
    }

    /// UTF-8 encoding of one scalar (RFC 3629 §3), without an intermediate String.
    private static func appendUTF8(_ u: Unicode.Scalar, to out: inout [UInt8]) {
        let v: UInt32 = u.value
        // The low bits of `x` after a lead byte's marker; a scalar's value bounds every lead byte,
        // so truncating loses nothing. (Typed bytes keep the literals' type inference cheap.)
        func byte(_ marker: UInt8, _ x: UInt32, _ mask: UInt8) -> UInt8 { marker | (UInt8(truncatingIfNeeded: x) & mask) }
        switch v {
        case 0..<0x80:
            out.append(UInt8(truncatingIfNeeded: v))
        case 0x80..<0x800:
            out.append(byte(0xC0, v >> 6, 0x1F))
            out.append(byte(0x80, v, 0x3F))
        case 0x800..<0x10000:
            out.append(byte(0xE0, v >> 12, 0x0F))
            out.append(byte(0x80, v >> 6, 0x3F))
            out.append(byte(0x80, v, 0x3F))
        default:
            out.append(byte(0xF0, v >> 18, 0x07))
            out.append(byte(0x80, v >> 12, 0x3F))
            out.append(byte(0x80, v >> 6, 0x3F))
            out.append(byte(0x80, v, 0x3F))
        }
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard i + 4 <= bytes.count else { throw fail("short \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[i]
            let d: UInt32
            switch b {
            case 0x30...0x39: d = UInt32(b - 0x30)
            case 0x41...0x46: d = UInt32(b - 0x41 + 10)
            case 0x61...0x66: d = UInt32(b - 0x61 + 10)
            default: throw fail("invalid hex digit")
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }
}

extension JSONValue {
    public static func parse(_ bytes: [UInt8], maxDepth: Int = JSONParser.defaultMaxDepth,
                             rejectDuplicateKeys: Bool = false) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { parseResult($0, maxDepth, rejectDuplicateKeys) }.get()
    }

    public static func parse(_ string: String, maxDepth: Int = JSONParser.defaultMaxDepth,
                             rejectDuplicateKeys: Bool = false) throws(JSONParseError) -> JSONValue {
        var s = string
        return try s.withUTF8 { parseResult($0, maxDepth, rejectDuplicateKeys) }.get()
    }

    public static func parse(_ bytes: ArraySlice<UInt8>, maxDepth: Int = JSONParser.defaultMaxDepth,
                             rejectDuplicateKeys: Bool = false) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { parseResult($0, maxDepth, rejectDuplicateKeys) }.get()
    }

    /// The parse as a `Result`, so it can leave a `withUnsafeBufferPointer` closure typed.
    private static func parseResult(_ buffer: UnsafeBufferPointer<UInt8>, _ maxDepth: Int,
                                    _ rejectDuplicateKeys: Bool) -> Result<JSONValue, JSONParseError> {
        do throws(JSONParseError) {
            return .success(try JSONParser.parse(buffer, maxDepth: maxDepth, rejectDuplicateKeys: rejectDuplicateKeys))
        } catch {
            return .failure(error)
        }
    }
}
