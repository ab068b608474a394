/// A WebSocket frame as it is on the wire (RFC 6455 §5.2), written and read by the test
/// client's own codec, independent of the server's.
public struct RawWebSocketFrame: Equatable, Sendable {
    public var fin: Bool
    /// RSV1-3 as the low three bits.
    public var rsv: UInt8
    public var opcode: UInt8
    /// Present on client frames (§5.3); a server must not mask (§5.1).
    public var maskingKey: [UInt8]?
    public var payload: [UInt8]

    public init(fin: Bool = true, rsv: UInt8 = 0, opcode: UInt8, maskingKey: [UInt8]? = nil, payload: [UInt8]) {
        self.fin = fin
        self.rsv = rsv
        self.opcode = opcode
        self.maskingKey = maskingKey
        self.payload = payload
    }

    /// The masking key of RFC 6455 §5.7's examples.
    public static let exampleMask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]

    /// The frame's bytes, the payload masked with `maskingKey` if there is one.
    public func encoded() -> [UInt8] {
        let mask = maskingKey
        var out: [UInt8] = [(fin ? 0x80 : 0) | (rsv & 0x07) << 4 | (opcode & 0x0F)]
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        let n = payload.count
        if n < 126 {
            out.append(maskBit | UInt8(n))
        } else if n <= 0xFFFF {
            out += [maskBit | 126, UInt8(n >> 8), UInt8(n & 0xFF)]
        } else {
            out.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: UInt64(n) >> UInt64(shift))) }
        }
        guard let mask else { return out + payload }
        out += mask
        for (i, b) in payload.enumerated() { out.append(b ^ mask[i & 3]) }
        return out
    }

    /// Decodes one frame from the front of `buffer`: the frame and how many bytes it used, or
    /// nil if it has not fully arrived. A masked frame keeps its key and gets its payload unmasked.
    public static func decode(_ buffer: [UInt8]) -> (frame: RawWebSocketFrame, used: Int)? {
        guard buffer.count >= 2 else { return nil }
        var length = Int(buffer[1] & 0x7F)
        var offset = 2
        if length == 126 {
            guard buffer.count >= 4 else { return nil }
            length = Int(buffer[2]) << 8 | Int(buffer[3])
            offset = 4
        } else if length == 127 {
            guard buffer.count >= 10 else { return nil }
            length = 0
            for i in 2..<10 { length = length << 8 | Int(buffer[i]) }
            offset = 10
        }
        let masked = buffer[1] & 0x80 != 0
        var mask: [UInt8]?
        if masked {
            guard buffer.count >= offset + 4 else { return nil }
            mask = Array(buffer[offset..<offset + 4])
            offset += 4
        }
        guard buffer.count >= offset + length else { return nil }
        var payload = Array(buffer[offset..<offset + length])
        if let mask { for i in payload.indices { payload[i] ^= mask[i & 3] } }
        let frame = RawWebSocketFrame(fin: buffer[0] & 0x80 != 0, rsv: (buffer[0] >> 4) & 0x07,
                                      opcode: buffer[0] & 0x0F, maskingKey: mask, payload: payload)
        return (frame, offset + length)
    }

    /// Every complete frame in `bytes` (what one read held), in order.
    public static func decodeAll(_ bytes: [UInt8]) -> [RawWebSocketFrame] {
        var out: [RawWebSocketFrame] = []
        var rest = bytes
        while let (frame, used) = decode(rest) {
            out.append(frame)
            rest.removeFirst(used)
        }
        return out
    }
}
