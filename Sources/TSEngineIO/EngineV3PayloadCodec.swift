import TSCrypto

/// Pure codec of Engine.IO v3 HTTP long-polling payloads (Engine.IO protocol v3, "Payload
/// encoding"; what `realtime.allowEIO3` clients speak — socket.io 2.x JS clients,
/// Socket.IO-Client-Swift ≤ 15, python-engineio 3.x). No I/O.
///
/// Two forms:
/// - text: `<length>:<packet>` repeated, the length counted in UTF-16 code units of the packet
///   string (as the JavaScript reference counts `string.length`); a binary packet is
///   `b4<base64>`.
/// - binary (clients that support binary and did not ask for `b64=1`; used only when the
///   payload holds binary data): per packet a kind byte (`0` string, `1` binary), the decimal
///   digits of the length as byte values 0–9, `0xFF`, then the packet (a string packet's UTF-8
///   bytes; a binary packet's type byte `4` and its raw bytes). Lengths count bytes, which is
///   what the decoders (JS `decodePayloadAsBinary`, python-engineio) read.
public enum EngineV3PayloadCodec {
    static let colon: UInt8 = 0x3A

    // MARK: decoding

    public static func decodePayload(_ body: [UInt8]) throws(EngineDecodeError) -> [EnginePacket] {
        guard let first = body.first else { throw .empty }
        return first <= 1 ? try decodeBinaryForm(body) : try decodeTextForm(body)
    }

    static func decodeBinaryForm(_ body: [UInt8]) throws(EngineDecodeError) -> [EnginePacket] {
        var packets: [EnginePacket] = []
        var i = 0
        while i < body.count {
            let kind = body[i]
            guard kind <= 1 else { throw .unknownType(kind) }
            i += 1
            var length = 0
            var digits = 0
            while i < body.count, body[i] != 0xFF {
                guard body[i] <= 9, digits < 10 else { throw .invalidLength }
                length = length * 10 + Int(body[i])
                digits += 1
                i += 1
            }
            guard digits > 0, i < body.count, body.count - (i + 1) >= length else { throw .invalidLength }
            i += 1
            let data = body[i..<(i + length)]
            i += length
            if kind == 0 {
                packets.append(try EnginePacketCodec.decodeText(data, allowBase64Binary: false))
            } else {
                // A binary packet: its type byte (always `4`, message), then the raw data.
                guard let type = data.first, type == EnginePacketType.message.rawValue else { throw .unknownType(data.first ?? 0) }
                packets.append(.binary(Array(data.dropFirst())))
            }
        }
        return packets
    }

    static func decodeTextForm(_ body: [UInt8]) throws(EngineDecodeError) -> [EnginePacket] {
        guard let text = String(validating: body, as: UTF8.self) else { throw .invalidUTF8 }
        let units = Array(text.utf16)
        var packets: [EnginePacket] = []
        var i = 0
        while i < units.count {
            var length = 0
            var digits = 0
            while i < units.count, units[i] != UInt16(colon) {
                guard units[i] >= 0x30, units[i] <= 0x39, digits < 10 else { throw .invalidLength }
                length = length * 10 + Int(units[i] - 0x30)
                digits += 1
                i += 1
            }
            guard digits > 0, i < units.count, units.count - (i + 1) >= length, length > 0 else { throw .invalidLength }
            i += 1
            let packet = String(decoding: units[i..<(i + length)], as: UTF16.self)
            i += length
            packets.append(try decodePacketString(packet))
        }
        return packets
    }

    /// One v3 text packet: `<type digit><data>`, or `b4<base64>` for binary.
    static func decodePacketString(_ s: String) throws(EngineDecodeError) -> EnginePacket {
        let utf8 = Array(s.utf8)
        if utf8.first == EnginePacketCodec.asciiB {
            guard utf8.count >= 2, utf8[1] == EnginePacketType.message.wireByte else { throw .unknownType(utf8.count > 1 ? utf8[1] : 0) }
            guard let raw = Base64.decode(bytes: utf8.dropFirst(2)) else { throw .invalidBase64 }
            return .binary(raw)
        }
        return try EnginePacketCodec.decodeText(utf8[...], allowBase64Binary: false)
    }

    // MARK: encoding

    /// Encodes queued segments (v4 form, as `EnginePacketCodec.encodeText` writes them: a text
    /// packet's type digit + UTF-8 data, or `b` + base64 for binary) as one v3 payload. The
    /// binary form is used only when `supportsBinary` and some packet is binary.
    public static func encodePayload(segments: [[UInt8]], supportsBinary: Bool) -> (body: [UInt8], binary: Bool) {
        let hasBinary = segments.contains { $0.first == EnginePacketCodec.asciiB }
        var out: [UInt8] = []
        if supportsBinary && hasBinary {
            for seg in segments {
                if seg.first == EnginePacketCodec.asciiB {
                    let raw = Base64.decode(bytes: seg.dropFirst()) ?? []
                    out.append(1)
                    appendDigitBytes(raw.count + 1, to: &out)
                    out.append(0xFF)
                    out.append(EnginePacketType.message.rawValue)
                    out.append(contentsOf: raw)
                } else {
                    out.append(0)
                    appendDigitBytes(seg.count, to: &out)
                    out.append(0xFF)
                    out.append(contentsOf: seg)
                }
            }
            return (out, true)
        }
        for seg in segments {
            var packet = seg
            if seg.first == EnginePacketCodec.asciiB {
                // v3 names the packet type after the `b`: `b4<base64>`.
                packet = [EnginePacketCodec.asciiB, EnginePacketType.message.wireByte] + seg.dropFirst()
            }
            let length = String(decoding: packet, as: UTF8.self).utf16.count
            out.append(contentsOf: String(length).utf8)
            out.append(colon)
            out.append(contentsOf: packet)
        }
        return (out, false)
    }

    static func appendDigitBytes(_ n: Int, to out: inout [UInt8]) {
        for c in String(n).utf8 { out.append(c - 0x30) }
    }

    /// The WebSocket frame of a queued segment for a v3 session: text packets as in v4; a binary
    /// message carries its type byte `4` before the data (v3).
    static func webSocketFrame(forSegment seg: [UInt8]) -> [UInt8] {
        if seg.first == EnginePacketCodec.asciiB, let raw = Base64.decode(bytes: seg.dropFirst()) {
            return EngineWebSocketFraming.binaryFrame([EnginePacketType.message.rawValue] + raw)
        }
        return EngineWebSocketFraming.textFrame(seg)
    }
}
