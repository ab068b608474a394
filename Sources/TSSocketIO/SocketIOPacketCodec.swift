import TSJSON

/// Pure encoder/decoder of Socket.IO v5 packets (Socket.IO v5 protocol, "Packet encoding").
public enum SocketIOPacketCodec {
    /// Longest ack id accepted, in digits (ids are non-negative integers, JS-safe range).
    static let maxAckDigits = 15

    // MARK: Decoding

    /// Decodes the text of a Socket.IO packet (the data of an Engine.IO `message` packet).
    /// For binary types the attachments are still to come (`attachmentCount`).
    public static func decode(_ text: String, maxAttachments: Int = 10) throws(SocketIODecodeError) -> SocketIOPacket {
        try decode(Array(text.utf8)[...], maxAttachments: maxAttachments)
    }

    public static func decode(_ bytes: ArraySlice<UInt8>, maxAttachments: Int = 10) throws(SocketIODecodeError) -> SocketIOPacket {
        var i = bytes.startIndex
        let end = bytes.endIndex
        guard i < end else { throw .empty }
        let t = bytes[i]
        guard t >= 0x30, t <= 0x36, let type = SocketIOPacketType(rawValue: t &- 0x30) else { throw .unknownType }
        i += 1
        var packet = SocketIOPacket(type: type)

        // Attachment count "N-" (binary types only).
        if type.isBinary {
            var n = 0
            var digits = 0
            while i < end, bytes[i] >= 0x30, bytes[i] <= 0x39 {
                n = n * 10 + Int(bytes[i] &- 0x30)
                digits += 1
                i += 1
                if digits > 6 { throw .invalidAttachmentCount }
            }
            guard digits > 0, i < end, bytes[i] == 0x2D else { throw .invalidAttachmentCount }
            i += 1
            guard n <= maxAttachments else { throw .tooManyAttachments }
            packet.attachmentCount = n
        }

        // Namespace "/name," (up to a comma or the end).
        if i < end, bytes[i] == 0x2F {
            let start = i
            while i < end, bytes[i] != 0x2C { i += 1 }
            guard let ns = String(validating: bytes[start..<i], as: UTF8.self) else { throw .invalidPayload }
            packet.namespace = ns
            if i < end { i += 1 }  // the comma
        }

        // Ack id: digits right before the payload.
        if i < end, bytes[i] >= 0x30, bytes[i] <= 0x39 {
            var id: UInt64 = 0
            var digits = 0
            while i < end, bytes[i] >= 0x30, bytes[i] <= 0x39 {
                id = id * 10 + UInt64(bytes[i] &- 0x30)
                digits += 1
                i += 1
                if digits > maxAckDigits { throw .invalidAckID }
            }
            packet.ackID = id
        }

        if i < end {
            do { packet.data = try JSONValue.parse(bytes[i..<end]) } catch {
                // "42abc[...]": a non-numeric ack id leaves junk before the JSON.
                throw .invalidJSON
            }
        }
        try validate(packet)
        return packet
    }

    /// Payload rules per type (Socket.IO v5 protocol, "Packet format").
    static func validate(_ p: SocketIOPacket) throws(SocketIODecodeError) {
        switch p.type {
        case .connect:
            if let d = p.data, d.objectValue == nil { throw .invalidPayload }
        case .disconnect:
            if p.data != nil { throw .invalidPayload }
        case .connectError:
            guard let d = p.data, d.objectValue != nil || d.stringValue != nil else { throw .invalidPayload }
        case .event, .binaryEvent:
            guard let a = p.data?.arrayValue, let first = a.first, first.stringValue != nil else { throw .invalidPayload }
        case .ack, .binaryAck:
            guard p.data?.arrayValue != nil, p.ackID != nil else { throw .invalidPayload }
        }
        if p.type != .event && p.type != .binaryEvent && p.type != .ack && p.type != .binaryAck && p.ackID != nil {
            // An ack id only makes sense on events and acks.
            throw .invalidAckID
        }
    }

    // MARK: Encoding

    /// Encodes the text part of a packet (attachments travel separately as binary messages).
    /// For binary packets `attachments.count` is written as `N-`.
    public static func encode(_ p: SocketIOPacket, into out: inout [UInt8]) {
        out.append(p.type.wireByte)
        if p.type.isBinary {
            out.append(contentsOf: String(p.attachments.isEmpty ? p.attachmentCount : p.attachments.count).utf8)
            out.append(0x2D)
        }
        if p.namespace != "/" {
            out.append(contentsOf: p.namespace.utf8)
            out.append(0x2C)
        }
        if let id = p.ackID { out.append(contentsOf: String(id).utf8) }
        p.data?.serialize(into: &out)
    }

    public static func encode(_ p: SocketIOPacket) -> [UInt8] {
        var out: [UInt8] = []
        encode(p, into: &out)
        return out
    }

    public static func encodeString(_ p: SocketIOPacket) -> String { String(decoding: encode(p), as: UTF8.self) }

    /// An EVENT (or BINARY_EVENT when there are attachments) packet.
    public static func event(_ name: String, _ args: [JSONValue], namespace: String = "/", ackID: UInt64? = nil,
                             attachments: [[UInt8]] = []) -> SocketIOPacket {
        SocketIOPacket(type: attachments.isEmpty ? .event : .binaryEvent, namespace: namespace,
                       data: .array([.string(name)] + args), ackID: ackID, attachments: attachments)
    }

    /// An ACK (or BINARY_ACK) packet.
    public static func ack(_ id: UInt64, _ args: [JSONValue], namespace: String = "/", attachments: [[UInt8]] = []) -> SocketIOPacket {
        SocketIOPacket(type: attachments.isEmpty ? .ack : .binaryAck, namespace: namespace, data: .array(args),
                       ackID: id, attachments: attachments)
    }
}

/// Reassembles binary packets (Socket.IO v5 protocol, "Packet encoding", binary): a
/// BINARY_EVENT/BINARY_ACK announcing N attachments is complete after the next N binary
/// Engine.IO messages. Pure; one per Engine.IO session.
public struct SocketIOBinaryReassembler: Sendable {
    public let maxAttachments: Int
    /// The binary packet waiting for attachments, boxed: one reassembler lives as long as its
    /// connection and almost never waits, so it keeps a pointer, not a packet-sized optional.
    private var pendingBox: PendingPacket?
    private var pending: SocketIOPacket? {
        get { pendingBox?.packet }
        set { pendingBox = newValue.map(PendingPacket.init) }
    }

    private final class PendingPacket: Sendable {
        let packet: SocketIOPacket
        init(_ packet: SocketIOPacket) { self.packet = packet }
    }

    public init(maxAttachments: Int = 10) { self.maxAttachments = maxAttachments }

    public var isWaiting: Bool { pending != nil }

    /// A text message: returns the packet if complete (non-binary, or binary with 0 attachments),
    /// nil if attachments are awaited.
    public mutating func receive(text: String) throws(SocketIODecodeError) -> SocketIOPacket? {
        guard pending == nil else { throw .unexpectedText }
        return try receive(decoded: SocketIOPacketCodec.decode(text, maxAttachments: maxAttachments))
    }

    /// A text message already decoded (with this reassembler's `maxAttachments`), so a caller
    /// can parse before taking the lock that guards the reassembler; as `receive(text:)`.
    public mutating func receive(decoded p: SocketIOPacket) throws(SocketIODecodeError) -> SocketIOPacket? {
        guard pending == nil else { throw .unexpectedText }
        if p.type.isBinary && p.attachmentCount > 0 {
            pending = p
            return nil
        }
        return p
    }

    /// A binary message: returns the packet once its last attachment arrived.
    public mutating func receive(binary: [UInt8]) throws(SocketIODecodeError) -> SocketIOPacket? {
        guard var p = pending else { throw .unexpectedBinary }
        p.attachments.append(binary)
        if p.attachments.count == p.attachmentCount {
            pending = nil
            return p
        }
        pending = p
        return nil
    }
}
