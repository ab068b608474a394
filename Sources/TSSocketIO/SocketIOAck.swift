import TSJSON
import TSSockets

/// Why `emitWithAck` produced no answer.
public enum SocketIOAckError: Error, Sendable, Equatable {
    case timeout
    case disconnected
}

/// Answers an event that asked for an acknowledgement (Socket.IO v5, ACK `3<id>[...]`). Only
/// the first `send` is transmitted.
public struct SocketIOAck: Sendable {
    let socket: SocketIOSocket
    public let id: UInt64
    let sent = LockedValue(false)

    init(socket: SocketIOSocket, id: UInt64) {
        self.socket = socket
        self.id = id
    }

    public func send(_ args: [JSONValue]) { send(args, attachments: []) }

    /// Sends a BINARY_ACK when `attachments` is not empty (`args` hold placeholders).
    public func send(_ args: [JSONValue], attachments: [[UInt8]]) {
        let first: Bool = sent.withLock { was in
            defer { was = true }
            return !was
        }
        guard first else { return }
        socket.sendPacket(SocketIOPacketCodec.ack(id, args, namespace: socket.namespace, attachments: attachments))
    }
}

/// An incoming event with its binary attachments (for handlers that want them; the plain
/// `on` handlers see placeholders `{"_placeholder":true,"num":k}` in place of binary args).
public struct SocketIOEventData: Sendable {
    public let name: String
    public let args: [JSONValue]
    public let attachments: [[UInt8]]
}
