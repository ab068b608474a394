// RFC 6455 §5.2 (base framing protocol) and §5.3 (client-to-server masking).

/// Incremental frame decoder: a pure state machine over bytes, no I/O.
///
/// Feed bytes with `append(_:)` as they arrive, then call `nextFrame()` until it returns nil
/// (more bytes needed). The decoder only enforces what the wire format itself demands — the
/// 64-bit length MSB (§5.2) and `maxFrameSize`, which is checked as soon as the length field is
/// readable and before any payload is buffered or allocated. Semantic rules (masking, RSV,
/// opcodes, control-frame limits, fragmentation) are the `WebSocketStateMachine`'s job.
///
/// Because a frame is only returned once complete, the internal buffer never holds more than
/// one header (≤ 14 bytes) + `maxFrameSize` + whatever the last `append` carried.
public struct WebSocketFrameDecoder: Sendable {
    /// Largest accepted payload of a single frame, in bytes (see `WebSocketConfiguration.maxFrameSize`).
    public let maxFrameSize: Int

    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// Sticky: after an error the stream is unusable (frame boundaries are lost).
    private var failed: WebSocketProtocolError?

    public init(maxFrameSize: Int) {
        precondition(maxFrameSize >= 125, "maxFrameSize must allow control frames (125 bytes)")
        self.maxFrameSize = maxFrameSize
    }

    /// Bytes received but not yet returned as part of a frame.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty, failed == nil else { return }
        compactIfUseful()
        buffer.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// A parsed frame header (§5.2) whose payload may not have fully arrived yet.
    public struct Header: Sendable {
        public var fin: Bool
        public var rsv: UInt8
        public var opcode: WebSocketOpcode
        /// The 4-byte masking key (§5.3), nil for an unmasked frame.
        public var mask: (UInt8, UInt8, UInt8, UInt8)?
        public var isMasked: Bool { mask != nil }
        /// Payload length from the header (already checked against `maxFrameSize`).
        public var payloadLength: Int
        /// Payload bytes of this frame already buffered (≤ `payloadLength`).
        public var availablePayload: Int
        var headerLength: Int
    }

    /// The next complete frame, or nil when more bytes are needed.
    /// Throws (and keeps throwing) once the stream violates the framing rules.
    public mutating func nextFrame() throws(WebSocketProtocolError) -> WebSocketFrame? {
        guard let header = try parseHeader(), header.availablePayload == header.payloadLength else { return nil }
        let payloadStart = readIndex + header.headerLength
        var payload = Array(buffer[payloadStart..<(payloadStart + header.payloadLength)])
        var maskingKey: [UInt8]?
        if let key = header.mask {
            WebSocketFrameDecoder.applyMask(key, to: &payload)
            maskingKey = [key.0, key.1, key.2, key.3]
        }
        readIndex = payloadStart + header.payloadLength
        if readIndex == buffer.count {
            // Release the storage once everything is consumed: an idle connection keeps no
            // buffer (the next `append` allocates what it needs).
            buffer = []
            readIndex = 0
        }
        return WebSocketFrame(fin: header.fin, rsv: header.rsv, opcode: header.opcode,
                              maskingKey: maskingKey, payload: payload)
    }

    /// The header of the frame currently arriving, when it is complete but its payload is not
    /// (nil otherwise). Lets the state machine check a text payload's UTF-8 before the frame
    /// ends, so an invalid prefix fails fast (§8.1) even inside one large frame.
    public mutating func partialFrameHeader() throws(WebSocketProtocolError) -> Header? {
        guard let header = try parseHeader(), header.availablePayload < header.payloadLength else { return nil }
        return header
    }

    /// Unmasked payload bytes `offset..<header.availablePayload` of the partial frame `header`
    /// (as returned by `partialFrameHeader()`, with no `append`/`nextFrame` in between).
    public func partialPayload(_ header: Header, from offset: Int) -> [UInt8] {
        let start = readIndex + header.headerLength
        guard offset < header.availablePayload else { return [] }
        var bytes = Array(buffer[(start + offset)..<(start + header.availablePayload)])
        if let m = header.mask {
            // The key cycles from the start of the payload: rotate it to `offset`.
            let k = [m.0, m.1, m.2, m.3], r = offset & 3
            WebSocketFrameDecoder.applyMask((k[r], k[(r + 1) & 3], k[(r + 2) & 3], k[(r + 3) & 3]), to: &bytes)
        }
        return bytes
    }

    /// Parses the header at `readIndex`; nil if not all of it has arrived.
    private mutating func parseHeader() throws(WebSocketProtocolError) -> Header? {
        if let failed { throw failed }
        let available = buffer.count - readIndex
        guard available >= 2 else { return nil }

        // §5.2 first two bytes: FIN, RSV1-3, opcode(4) | MASK, payload len(7).
        let b0 = buffer[readIndex]
        let b1 = buffer[readIndex + 1]
        let masked = b1 & 0x80 != 0
        let len7 = b1 & 0x7F

        var headerLength = 2
        var payloadLength: UInt64
        switch len7 {
        case 126:
            // 16-bit extended length, network byte order.
            headerLength += 2
            guard available >= headerLength else { return nil }
            payloadLength = UInt64(buffer[readIndex + 2]) << 8 | UInt64(buffer[readIndex + 3])
        case 127:
            // 64-bit extended length; "the most significant bit MUST be 0".
            headerLength += 8
            guard available >= headerLength else { return nil }
            payloadLength = 0
            for i in 0..<8 { payloadLength = payloadLength << 8 | UInt64(buffer[readIndex + 2 + i]) }
            if payloadLength & (1 << 63) != 0 { try fail(.invalidPayloadLength) }
        default:
            payloadLength = UInt64(len7)
        }
        // The limit check happens here, before anything is allocated for the payload.
        if payloadLength > UInt64(maxFrameSize) { try fail(.frameTooLarge(length: payloadLength)) }

        var mask: (UInt8, UInt8, UInt8, UInt8)?
        if masked {
            guard available >= headerLength + 4 else { return nil }
            let m = readIndex + headerLength
            mask = (buffer[m], buffer[m + 1], buffer[m + 2], buffer[m + 3])
            headerLength += 4
        }
        let length = Int(payloadLength)
        return Header(fin: b0 & 0x80 != 0, rsv: (b0 >> 4) & 0x07, opcode: WebSocketOpcode(rawValue: b0 & 0x0F),
                      mask: mask, payloadLength: length,
                      availablePayload: min(length, available - headerLength), headerLength: headerLength)
    }

    private mutating func fail(_ error: WebSocketProtocolError) throws(WebSocketProtocolError) -> Never {
        failed = error
        buffer = []
        readIndex = 0
        throw error
    }

    /// Drop consumed bytes when that frees a worthwhile amount, so the buffer doesn't creep.
    private mutating func compactIfUseful() {
        if readIndex > 0 && (readIndex >= 4096 || readIndex * 2 >= buffer.count) {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
    }

    /// XOR `bytes` with the 4-byte masking key, octet i with key[i mod 4] (§5.3).
    /// Masking is an involution, so the same function masks and unmasks.
    public static func applyMask(_ key: (UInt8, UInt8, UInt8, UInt8), to bytes: inout [UInt8]) {
        let k = [key.0, key.1, key.2, key.3]
        let word = UInt32(key.0) | UInt32(key.1) << 8 | UInt32(key.2) << 16 | UInt32(key.3) << 24
        bytes.withUnsafeMutableBytes { raw in
            let count = raw.count
            var i = 0
            // Word-at-a-time over the bulk (key bytes in memory order match a little-endian load).
            #if _endian(little)
            while i + 4 <= count {
                let v = raw.loadUnaligned(fromByteOffset: i, as: UInt32.self) ^ word
                raw.storeBytes(of: v, toByteOffset: i, as: UInt32.self)
                i += 4
            }
            #endif
            while i < count {
                raw[i] ^= k[i & 3]
                i += 1
            }
        }
    }
}
