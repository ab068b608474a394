// RFC 6455 §5.2 (base framing protocol); server-to-client frames are never masked (§5.1).

/// Encodes frames into wire bytes. Pure and allocation-light: one array per frame.
///
/// For broadcast, encode a message once with `encodeMessage(_:)` and hand the same bytes to
/// every `WebSocketConnection.sendFrameBytes(_:)` — unmasked server frames are identical for
/// all recipients.
public enum WebSocketFrameEncoder {
    /// Encode one frame. `maskingKey` is only for client-side use (tests); servers leave it nil.
    public static func encode(
        opcode: WebSocketOpcode,
        payload: some Collection<UInt8>,
        fin: Bool = true,
        rsv: UInt8 = 0,
        maskingKey: (UInt8, UInt8, UInt8, UInt8)? = nil
    ) -> [UInt8] {
        let length = payload.count
        var out: [UInt8] = []
        out.reserveCapacity(length + 14)
        out.append((fin ? 0x80 : 0) | (rsv & 0x07) << 4 | opcode.rawValue)
        let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
        if length < 126 {
            out.append(maskBit | UInt8(length))
        } else if length <= 0xFFFF {
            out.append(maskBit | 126)
            out.append(UInt8(length >> 8))
            out.append(UInt8(length & 0xFF))
        } else {
            out.append(maskBit | 127)
            let l = UInt64(length)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((l >> UInt64(shift)) & 0xFF)) }
        }
        if let key = maskingKey {
            out.append(contentsOf: [key.0, key.1, key.2, key.3])
            var masked = Array(payload)
            WebSocketFrameDecoder.applyMask(key, to: &masked)
            out.append(contentsOf: masked)
        } else {
            out.append(contentsOf: payload)
        }
        return out
    }

    /// One complete (FIN) text or binary frame carrying `message`.
    public static func encodeMessage(_ message: WebSocketMessage) -> [UInt8] {
        switch message {
        case .text(let string): return encodeText(string)
        case .binary(let bytes): return encode(opcode: .binary, payload: bytes)
        }
    }

    /// One complete text frame. Swift strings are valid UTF-8, so the payload is too (§5.6).
    public static func encodeText(_ string: String) -> [UInt8] {
        encode(opcode: .text, payload: string.utf8)
    }

    public static func encodeBinary(_ bytes: [UInt8]) -> [UInt8] {
        encode(opcode: .binary, payload: bytes)
    }

    /// A Close frame (§5.5.1). `code` nil sends an empty body (allowed: the body is optional).
    /// The reason is truncated on a UTF-8 boundary so the payload stays ≤ 125 bytes.
    public static func encodeClose(code: UInt16?, reason: String = "") -> [UInt8] {
        encode(opcode: .close, payload: closePayload(code: code, reason: reason))
    }

    public static func closePayload(code: UInt16?, reason: String) -> [UInt8] {
        guard let code else { return [] }
        var payload: [UInt8] = [UInt8(code >> 8), UInt8(code & 0xFF)]
        var reasonBytes = Array(reason.utf8)
        if reasonBytes.count > 123 {
            var cut = 123
            // Don't split a multi-byte scalar: back up over continuation bytes (10xxxxxx).
            while cut > 0 && reasonBytes[cut] & 0xC0 == 0x80 { cut -= 1 }
            reasonBytes.removeSubrange(cut...)
        }
        payload.append(contentsOf: reasonBytes)
        return payload
    }
}
