// RFC 6455 §5.6 (data frames).

/// A complete, reassembled data message.
public enum WebSocketMessage: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
}
