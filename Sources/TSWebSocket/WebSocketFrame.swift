// RFC 6455 §5.2 (base framing protocol).

/// One decoded WebSocket frame. `payload` is already unmasked (RFC 6455 §5.3); `maskingKey`
/// records whether (and with which key) the peer masked it, so the state machine can enforce
/// that client frames are masked (§5.1).
public struct WebSocketFrame: Equatable, Sendable {
    public var fin: Bool
    /// RSV1, RSV2, RSV3 as the low three bits (RSV1 = 0b100). Must be 0 without extensions (§5.2).
    public var rsv: UInt8
    public var opcode: WebSocketOpcode
    public var maskingKey: [UInt8]?
    public var payload: [UInt8]

    public init(fin: Bool = true, rsv: UInt8 = 0, opcode: WebSocketOpcode, maskingKey: [UInt8]? = nil, payload: [UInt8] = []) {
        self.fin = fin
        self.rsv = rsv
        self.opcode = opcode
        self.maskingKey = maskingKey
        self.payload = payload
    }

    public var isMasked: Bool { maskingKey != nil }
}
