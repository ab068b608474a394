/// Engine.IO v4 packet (Engine.IO v4 protocol, "Packet encoding").
///
/// A packet is a one-digit type followed by optional data. Text packets travel as WebSocket
/// text frames or as `\x1e`-separated segments of a polling payload; binary packets are
/// always `message` packets and travel as WebSocket binary frames or, in a polling payload,
/// as `b` + base64.
public enum EnginePacketType: UInt8, Sendable, CaseIterable {
    case open = 0, close = 1, ping = 2, pong = 3, message = 4, upgrade = 5, noop = 6

    /// ASCII digit of the type on the wire.
    @inlinable public var wireByte: UInt8 { 0x30 &+ rawValue }
}

/// Data of an Engine.IO packet: UTF-8 text (possibly empty) or binary bytes.
public enum EnginePacketData: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
}

public struct EnginePacket: Sendable, Equatable {
    public var type: EnginePacketType
    public var data: EnginePacketData

    public init(_ type: EnginePacketType, _ text: String = "") {
        self.type = type
        self.data = .text(text)
    }

    /// A binary `message` packet (the only packet type that may carry binary data in v4).
    public static func binary(_ bytes: [UInt8]) -> EnginePacket {
        var p = EnginePacket(.message)
        p.data = .binary(bytes)
        return p
    }

    public static func message(_ text: String) -> EnginePacket { EnginePacket(.message, text) }

    /// Text of the packet, "" for binary ones.
    public var text: String {
        if case .text(let s) = data { return s }
        return ""
    }

    public var isBinary: Bool {
        if case .binary = data { return true }
        return false
    }
}

/// Why an Engine.IO packet or payload could not be decoded. Any of them closes the session
/// (Engine.IO v4: "the server MUST close the session upon invalid packet format").
public enum EngineDecodeError: Error, Sendable, Equatable {
    case empty
    case unknownType(UInt8)
    case invalidBase64
    case invalidUTF8
    /// An Engine.IO v3 payload length that is missing, not a number, or past the end.
    case invalidLength
}
