import TSCrypto
/// Pure encoder/decoder of Engine.IO v4 packets and polling payloads (Engine.IO v4 protocol,
/// "Packet encoding" and "Payload encoding"). No I/O; bytes in, values out.
public enum EnginePacketCodec {
    /// Record separator joining packets of an HTTP long-polling payload (v4).
    public static let recordSeparator: UInt8 = 0x1E
    static let asciiB: UInt8 = 0x62  // "b": base64 binary packet in a polling payload

    // MARK: Decoding

    /// Decodes one text packet: a WebSocket text frame or one segment of a polling payload
    /// (where a `b` prefix marks a base64-encoded binary message).
    public static func decodeText(_ bytes: ArraySlice<UInt8>, allowBase64Binary: Bool = false) throws(EngineDecodeError) -> EnginePacket {
        guard let first = bytes.first else { throw .empty }
        if allowBase64Binary && first == asciiB {
            guard let raw = Base64.decode(bytes: bytes.dropFirst()) else { throw .invalidBase64 }
            return .binary(raw)
        }
        guard first >= 0x30, first <= 0x36, let type = EnginePacketType(rawValue: first &- 0x30) else {
            throw .unknownType(first)
        }
        let rest = bytes.dropFirst()
        if rest.isEmpty { return EnginePacket(type) }
        guard let text = String(validating: rest, as: UTF8.self) else { throw .invalidUTF8 }
        return EnginePacket(type, text)
    }

    /// Decodes a WebSocket text frame's string.
    public static func decodeText(_ string: String) throws(EngineDecodeError) -> EnginePacket {
        let utf8 = string.utf8
        guard let first = utf8.first else { throw .empty }
        guard first >= 0x30, first <= 0x36, let type = EnginePacketType(rawValue: first &- 0x30) else {
            throw .unknownType(first)
        }
        if utf8.count == 1 { return EnginePacket(type) }
        return EnginePacket(type, String(string.unicodeScalars.dropFirst()))
    }

    /// A WebSocket binary frame is a binary `message` packet (v4: no type prefix).
    public static func decodeBinaryFrame(_ bytes: [UInt8]) -> EnginePacket { .binary(bytes) }

    /// Decodes an HTTP long-polling payload: packets separated by `\x1e`, binary as `b<base64>`.
    public static func decodePayload(_ body: [UInt8]) throws(EngineDecodeError) -> [EnginePacket] {
        guard !body.isEmpty else { throw .empty }
        var packets: [EnginePacket] = []
        var start = body.startIndex
        while start <= body.endIndex {
            let end = body[start...].firstIndex(of: recordSeparator) ?? body.endIndex
            packets.append(try decodeText(body[start..<end], allowBase64Binary: true))
            start = end + 1
        }
        return packets
    }

    // MARK: Encoding

    /// Encodes a text packet (type digit + UTF-8 data) into `out`.
    public static func encodeText(_ packet: EnginePacket, into out: inout [UInt8]) {
        switch packet.data {
        case .text(let s):
            out.append(packet.type.wireByte)
            out.append(contentsOf: s.utf8)
        case .binary(let b):
            // Only reachable from polling: binary goes as "b" + base64.
            out.append(asciiB)
            Base64.encode(b, into: &out)
        }
    }

    /// The text a WebSocket text frame carries for `packet` (which must be a text packet).
    public static func encodeTextString(_ packet: EnginePacket) -> String {
        var s = String(UnicodeScalar(packet.type.wireByte))
        s += packet.text
        return s
    }

    /// Encodes packets as one HTTP long-polling payload joined by `\x1e`.
    public static func encodePayload(_ packets: [EnginePacket]) -> [UInt8] {
        var out: [UInt8] = []
        for (i, p) in packets.enumerated() {
            if i > 0 { out.append(recordSeparator) }
            encodeText(p, into: &out)
        }
        return out
    }

    /// Joins already-encoded packet segments (each as produced by `encodeText`) into a payload.
    public static func joinPayload(_ segments: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(segments.reduce(segments.count) { $0 + $1.count })
        for (i, s) in segments.enumerated() {
            if i > 0 { out.append(recordSeparator) }
            out.append(contentsOf: s)
        }
        return out
    }
}
