/// A small strict JSON (RFC 8259) reader/writer for JWT headers and payloads, so TSCrypto
/// needs neither Foundation nor TSJSON. Duplicate object keys are rejected (RFC 7515 §5.2
/// step 4 allows it, and it removes any parser-differential games with `alg`).
enum MiniJSON: Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([MiniJSON])
    case object([String: MiniJSON])

    struct ParseError: Error {}

    static let maximumDepth = 16

    /// RFC 7519 §2 NumericDate: an integer, or a JSON number with an integral value.
    var numericDate: Int64? {
        switch self {
        case .int(let v): return v
        case .double(let d) where d.rounded() == d && abs(d) < 9.0e15: return Int64(d)
        default: return nil
        }
    }

    static func parse(_ bytes: [UInt8]) throws(ParseError) -> MiniJSON {
        var p = Parser(bytes: bytes)
        let value = try p.value(depth: 0)
        p.skipWhitespace()
        guard p.index == bytes.count else { throw ParseError() }
        return value
    }

    static func appendQuoted(_ s: String, to out: inout String) {
        out.append("\"")
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out.append("\\\"")
            case "\\": out.append("\\\\")
            case "\n": out.append("\\n")
            case "\r": out.append("\\r")
            case "\t": out.append("\\t")
            case _ where scalar.value < 0x20:
                let hex = Array("0123456789abcdef")
                out.append("\\u00")
                out.append(hex[Int(scalar.value >> 4)])
                out.append(hex[Int(scalar.value & 0xf)])
            default: out.unicodeScalars.append(scalar)
            }
        }
        out.append("\"")
    }

    struct Parser {
        let bytes: [UInt8]
        var index = 0

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[index]) { index += 1 }
        }

        mutating func value(depth: Int) throws(ParseError) -> MiniJSON {
            guard depth < MiniJSON.maximumDepth else { throw ParseError() }
            skipWhitespace()
            guard index < bytes.count else { throw ParseError() }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var dict: [String: MiniJSON] = [:]
                skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(dict) }
                while true {
                    skipWhitespace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw ParseError() }
                    let key = try string()
                    skipWhitespace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw ParseError() }
                    index += 1
                    let v = try value(depth: depth + 1)
                    guard dict.updateValue(v, forKey: key) == nil else { throw ParseError() }
                    skipWhitespace()
                    guard index < bytes.count else { throw ParseError() }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(dict) }
                    throw ParseError()
                }
            case UInt8(ascii: "["):
                index += 1
                var items: [MiniJSON] = []
                skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
                while true {
                    items.append(try value(depth: depth + 1))
                    skipWhitespace()
                    guard index < bytes.count else { throw ParseError() }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
                    throw ParseError()
                }
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            default:
                return try number()
            }
        }

        mutating func literal(_ word: StaticString) throws(ParseError) {
            let w = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            guard index + w.count <= bytes.count, bytes[index..<index + w.count].elementsEqual(w) else { throw ParseError() }
            index += w.count
        }

        mutating func number() throws(ParseError) -> MiniJSON {
            let start = index
            var isInteger = true
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw ParseError() }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
            } else {
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                isInteger = false
                index += 1
                guard index < bytes.count, isDigit(bytes[index]) else { throw ParseError() }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                isInteger = false
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard index < bytes.count, isDigit(bytes[index]) else { throw ParseError() }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if isInteger, let v = Int64(text) { return .int(v) }
            guard let d = Double(text), d.isFinite else { throw ParseError() }
            return .double(d)
        }

        func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

        mutating func string() throws(ParseError) -> String {
            index += 1  // opening quote
            var out = [UInt8]()
            while true {
                guard index < bytes.count else { throw ParseError() }
                let c = bytes[index]
                index += 1
                switch c {
                case UInt8(ascii: "\""):
                    // Reject invalid UTF-8 rather than repairing it.
                    guard let s = String(validating: out, as: UTF8.self) else { throw ParseError() }
                    return s
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { throw ParseError() }
                    let e = bytes[index]
                    index += 1
                    switch e {
                    case UInt8(ascii: "\""): out.append(0x22)
                    case UInt8(ascii: "\\"): out.append(0x5c)
                    case UInt8(ascii: "/"): out.append(0x2f)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0c)
                    case UInt8(ascii: "n"): out.append(0x0a)
                    case UInt8(ascii: "r"): out.append(0x0d)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800...0xDBFF).contains(scalar) {
                            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { throw ParseError() }
                            index += 2
                            let low = try hex4()
                            guard (0xDC00...0xDFFF).contains(low) else { throw ParseError() }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00...0xDFFF).contains(scalar) {
                            throw ParseError()
                        }
                        guard let u = Unicode.Scalar(scalar) else { throw ParseError() }
                        out.append(contentsOf: Array(String(Character(u)).utf8))
                    default: throw ParseError()
                    }
                default:
                    guard c >= 0x20 else { throw ParseError() }
                    out.append(c)
                }
            }
        }

        mutating func hex4() throws(ParseError) -> UInt32 {
            guard index + 4 <= bytes.count else { throw ParseError() }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let c = bytes[index]
                index += 1
                let d: UInt32
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
                default: throw ParseError()
                }
                v = v << 4 | d
            }
            return v
        }
    }
}
