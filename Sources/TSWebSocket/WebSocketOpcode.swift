// RFC 6455 §5.2 (opcode field) and §11.8 (opcode registry).

/// A frame opcode. A struct over the raw 4-bit value (not an enum) so the decoder can
/// represent reserved opcodes and the state machine can reject them with 1002 (RFC 6455 §5.2:
/// "If an unknown opcode is received, the receiving endpoint MUST _Fail the WebSocket Connection_").
public struct WebSocketOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x0F }

    public static let continuation = WebSocketOpcode(rawValue: 0x0)
    public static let text = WebSocketOpcode(rawValue: 0x1)
    public static let binary = WebSocketOpcode(rawValue: 0x2)
    public static let close = WebSocketOpcode(rawValue: 0x8)
    public static let ping = WebSocketOpcode(rawValue: 0x9)
    public static let pong = WebSocketOpcode(rawValue: 0xA)

    /// Control frames have the most significant opcode bit set (RFC 6455 §5.5).
    public var isControl: Bool { rawValue & 0x8 != 0 }

    /// Opcodes defined by RFC 6455; 0x3–0x7 and 0xB–0xF are reserved (§5.2).
    public var isKnown: Bool {
        switch rawValue {
        case 0x0, 0x1, 0x2, 0x8, 0x9, 0xA: return true
        default: return false
        }
    }

    public var description: String {
        switch rawValue {
        case 0x0: return "continuation"
        case 0x1: return "text"
        case 0x2: return "binary"
        case 0x8: return "close"
        case 0x9: return "ping"
        case 0xA: return "pong"
        default: return "reserved(0x\(String(rawValue, radix: 16)))"
        }
    }
}
