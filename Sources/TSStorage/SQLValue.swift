/// A value bound to or read from SQLite (https://sqlite.org/datatype3.html storage classes).
public enum SQLValue: Sendable, Hashable {
    case null
    case int(Int64)
    case double(Double)
    case text(String)
    case blob([UInt8])

    public static func of(_ s: String?) -> SQLValue { s.map { .text($0) } ?? .null }
    public static func of(_ i: Int?) -> SQLValue { i.map { .int(Int64($0)) } ?? .null }
    public static func of(_ i: Int64?) -> SQLValue { i.map { .int($0) } ?? .null }
    public static func of(_ d: Double?) -> SQLValue { d.map { .double($0) } ?? .null }
    /// Booleans are stored as 0/1 integers.
    public static func of(_ b: Bool?) -> SQLValue { b.map { .int($0 ? 1 : 0) } ?? .null }
    public static func of(_ bytes: [UInt8]?) -> SQLValue { bytes.map { .blob($0) } ?? .null }

    public var isNull: Bool { if case .null = self { return true } else { return false } }
}

extension SQLValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self = .int(value) }
}

extension SQLValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension SQLValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .text(value) }
}

extension SQLValue: ExpressibleByNilLiteral {
    public init(nilLiteral: ()) { self = .null }
}

extension SQLValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .int(value ? 1 : 0) }
}

extension SQLValue: CustomStringConvertible {
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .int(let v): return String(v)
        case .double(let v): return String(v)
        case .text(let s):
            var out = "'"
            for c in s { if c == "'" { out += "''" } else { out.append(c) } }
            return out + "'"
        case .blob(let b): return "x'<\(b.count) bytes>'"
        }
    }
}
