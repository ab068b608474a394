// RFC 6455 §7.1.7 (_Fail the WebSocket Connection_) and §7.4.1 (status codes).

/// A violation detected while decoding or interpreting the peer's frames. Each case knows the
/// close status code the server sends before dropping the connection.
public enum WebSocketProtocolError: Error, Equatable, Sendable {
    /// RSV1–3 set without a negotiated extension (§5.2).
    case reservedBitsSet
    /// Opcode 0x3–0x7 or 0xB–0xF (§5.2).
    case unknownOpcode(UInt8)
    /// A client-to-server frame without the MASK bit (§5.1).
    case unmaskedFrame
    /// A control frame with payload over 125 bytes (§5.5).
    case controlFrameTooLong
    /// A control frame with FIN clear (§5.5: "Control frames MUST NOT be fragmented").
    case fragmentedControlFrame
    /// A 64-bit payload length with its most significant bit set (§5.2).
    case invalidPayloadLength
    /// A single frame's payload longer than `WebSocketConfiguration.maxFrameSize`.
    case frameTooLarge(length: UInt64)
    /// A continuation frame with no fragmented message in progress (§5.4).
    case unexpectedContinuation
    /// A new text/binary frame while a fragmented message is still open (§5.4).
    case expectedContinuation
    /// A (reassembled) message longer than `WebSocketConfiguration.maxMessageSize`.
    case messageTooLarge
    /// A text message (or a prefix of one) that is not valid UTF-8 (§5.6, §8.1).
    case invalidUTF8
    /// A close frame with a 1-byte payload (§5.5.1: the body, if any, starts with a 2-byte code).
    case invalidClosePayload
    /// A close frame with a status code peers may not send (§7.4).
    case invalidCloseCode(UInt16)
    /// A close frame whose reason is not valid UTF-8 (§5.5.1).
    case invalidCloseReason

    /// The status code to put in the Close frame the server sends (§7.4.1).
    public var closeCode: UInt16 {
        switch self {
        case .reservedBitsSet, .unknownOpcode, .unmaskedFrame, .controlFrameTooLong,
             .fragmentedControlFrame, .invalidPayloadLength, .unexpectedContinuation,
             .expectedContinuation, .invalidClosePayload, .invalidCloseCode, .invalidCloseReason:
            return WebSocketCloseCode.protocolError
        case .frameTooLarge, .messageTooLarge:
            return WebSocketCloseCode.messageTooBig
        case .invalidUTF8:
            return WebSocketCloseCode.invalidPayloadData
        }
    }

    /// A short, ASCII reason for the Close frame (≤ 123 bytes, §5.5.1).
    public var closeReason: String {
        switch self {
        case .reservedBitsSet: return "reserved bits set"
        case .unknownOpcode: return "unknown opcode"
        case .unmaskedFrame: return "client frames must be masked"
        case .controlFrameTooLong: return "control frame too long"
        case .fragmentedControlFrame: return "fragmented control frame"
        case .invalidPayloadLength: return "invalid payload length"
        case .frameTooLarge: return "frame too large"
        case .unexpectedContinuation: return "unexpected continuation frame"
        case .expectedContinuation: return "expected continuation frame"
        case .messageTooLarge: return "message too large"
        case .invalidUTF8: return "invalid UTF-8"
        case .invalidClosePayload: return "invalid close payload"
        case .invalidCloseCode: return "invalid close code"
        case .invalidCloseReason: return "invalid close reason"
        }
    }
}
