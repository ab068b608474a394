/// Encodes client commands. A client sends every command as an array of bulk strings
/// (RESP spec, §"Sending commands to a Redis server").
public enum RESPEncoder {
    /// `*N\r\n` then `$len\r\narg\r\n` per argument.
    public static func command(_ arguments: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16 + arguments.reduce(0) { $0 + $1.count + 16 })
        appendHeader(UInt8(ascii: "*"), arguments.count, to: &out)
        for a in arguments {
            appendHeader(UInt8(ascii: "$"), a.count, to: &out)
            out += a
            out += [13, 10]
        }
        return out
    }

    /// A command whose arguments are text.
    public static func command(_ arguments: String...) -> [UInt8] {
        command(arguments.map { Array($0.utf8) })
    }

    private static func appendHeader(_ type: UInt8, _ n: Int, to out: inout [UInt8]) {
        out.append(type)
        out += Array(String(n).utf8)
        out += [13, 10]
    }
}

extension RESPEncoder {
    /// Any value as RESP2 bytes (what a server sends; the decoder's tests and fuzz oracle use it).
    /// Simple strings and errors must not contain CR or LF.
    public static func encode(_ value: RESPValue) -> [UInt8] {
        var out: [UInt8] = []
        encode(value, into: &out)
        return out
    }

    public static func encode(_ value: RESPValue, into out: inout [UInt8]) {
        switch value {
        case .simpleString(let s): out.append(UInt8(ascii: "+")); out += Array(s.utf8); out += [13, 10]
        case .error(let s): out.append(UInt8(ascii: "-")); out += Array(s.utf8); out += [13, 10]
        case .integer(let i): out.append(UInt8(ascii: ":")); out += Array(String(i).utf8); out += [13, 10]
        case .bulkString(nil): out += Array("$-1\r\n".utf8)
        case .bulkString(let b?):
            appendHeader(UInt8(ascii: "$"), b.count, to: &out)
            out += b
            out += [13, 10]
        case .array(nil): out += Array("*-1\r\n".utf8)
        case .array(let items?):
            appendHeader(UInt8(ascii: "*"), items.count, to: &out)
            for item in items { encode(item, into: &out) }
        }
    }
}
