/// One RESP2 value (Redis serialization protocol, https://redis.io/docs/latest/develop/reference/protocol-spec/,
/// "RESP versions": RESP2). RESP3 types are never requested (we do not send HELLO 3) and are refused.
public enum RESPValue: Sendable, Equatable {
    /// `+OK\r\n` (simple strings, §"Simple strings").
    case simpleString(String)
    /// `-ERR message\r\n` (§"Simple errors").
    case error(String)
    /// `:42\r\n` (§"Integers").
    case integer(Int64)
    /// `$3\r\nfoo\r\n`; nil for the null bulk string `$-1\r\n` (§"Bulk strings").
    case bulkString([UInt8]?)
    /// `*2\r\n…`; nil for the null array `*-1\r\n` (§"Arrays").
    case array([RESPValue]?)

    /// The text of a simple or bulk string (UTF-8, lossy), nil otherwise.
    public var text: String? {
        switch self {
        case .simpleString(let s): return s
        case .bulkString(let b?): return String(decoding: b, as: UTF8.self)
        default: return nil
        }
    }

    /// The bytes of a bulk string (or of a simple string), nil otherwise.
    public var bytes: [UInt8]? {
        switch self {
        case .bulkString(let b): return b
        case .simpleString(let s): return Array(s.utf8)
        default: return nil
        }
    }
}
