import TSJSON

/// Socket.IO v5 packet types (Socket.IO v5 protocol, "Packet types").
public enum SocketIOPacketType: UInt8, Sendable, CaseIterable {
    case connect = 0, disconnect = 1, event = 2, ack = 3, connectError = 4, binaryEvent = 5, binaryAck = 6

    @inlinable public var wireByte: UInt8 { 0x30 &+ rawValue }
    public var isBinary: Bool { self == .binaryEvent || self == .binaryAck }
}

/// A Socket.IO v5 packet (Socket.IO v5 protocol, "Packet format"):
/// `<type>[<attachments>-][<namespace>,][<ack id>][JSON payload]`.
///
/// Binary attachments are not part of the JSON: the payload holds
/// `{"_placeholder":true,"num":k}` objects and the attachments follow as binary Engine.IO
/// messages, carried here in `attachments`.
public struct SocketIOPacket: Sendable, Equatable {
    public var type: SocketIOPacketType
    /// Namespace, `/` for the main one.
    public var namespace: String
    public var data: JSONValue?
    public var ackID: UInt64?
    /// Number of binary attachments announced (`N-`), binary types only.
    public var attachmentCount: Int
    /// The attachments themselves, once reassembled (decoding) or to send (encoding).
    public var attachments: [[UInt8]]

    public init(type: SocketIOPacketType, namespace: String = "/", data: JSONValue? = nil, ackID: UInt64? = nil,
                attachments: [[UInt8]] = []) {
        self.type = type
        self.namespace = namespace
        self.data = data
        self.ackID = ackID
        self.attachments = attachments
        self.attachmentCount = attachments.count
    }

    /// Event name and arguments of an EVENT/BINARY_EVENT packet.
    public var eventName: String? { data?.arrayValue?.first?.stringValue }
    public var eventArguments: [JSONValue] { Array((data?.arrayValue ?? []).dropFirst()) }

    /// The placeholder object standing for attachment `num` in a binary packet's payload.
    public static func placeholder(_ num: Int) -> JSONValue {
        .object(JSONObject([("_placeholder", .bool(true)), ("num", .int(Int64(num)))]))
    }

    /// `k` when `value` is a placeholder object, else nil.
    public static func placeholderIndex(_ value: JSONValue) -> Int? {
        guard case .object(let o) = value, o["_placeholder"] == .bool(true), let n = o["num"]?.intValue,
              n >= 0, n < Int64(Int32.max) else { return nil }
        return Int(n)
    }
}

/// Why a Socket.IO packet could not be decoded; the engine session that sent it is closed
/// (Socket.IO v5: an invalid packet closes the connection).
public enum SocketIODecodeError: Error, Sendable, Equatable {
    case empty
    case unknownType
    case invalidAttachmentCount
    case tooManyAttachments
    case invalidAckID
    case invalidJSON
    case invalidPayload
    /// A binary message arrived with no binary packet waiting for it, or text while one was.
    case unexpectedBinary
    case unexpectedText
}
