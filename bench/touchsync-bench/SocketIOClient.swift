import TSSockets

/// A minimal websocket-only Socket.IO v5 / Engine.IO v4 client for load generation.
/// RFC 6455 client side: the upgrade request, unmasked server frames in, masked frames out (the
/// mask key is zero, which RFC 6455 §5.3 allows; the payload is then unchanged). The accept key is
/// not verified: this is a load generator against our own server, not a conformance client.
// @unchecked Sendable: every mutable property is touched only on `connection.loop` (all
// callbacks come from the connection's handler methods, which run on the loop).
final class SocketIOBenchClient: ConnectionHandler, @unchecked Sendable {
    enum State { case connecting, upgraded, open, connected, closed }

    let index: Int
    let token: String
    var connection: Connection!
    private(set) var state: State = .connecting
    private var inbound: [UInt8] = []
    private var inboundStart = 0
    private var nextAck = 1
    /// Bookkeeping for `SocketFleet`.
    var joinedOnce = false
    var droppedOnPurpose = false

    /// Socket.IO CONNECT answered (the socket is authenticated).
    var onConnected: ((SocketIOBenchClient) -> Void)?
    /// A Socket.IO EVENT (`42…`): the whole Engine.IO message, valid only during the call.
    var onEvent: ((SocketIOBenchClient, UnsafeRawBufferPointer) -> Void)?
    /// A Socket.IO ACK (`43<id>…`): the ack id.
    var onAck: ((SocketIOBenchClient, Int) -> Void)?
    var onClose: ((SocketIOBenchClient, String) -> Void)?

    init(index: Int, token: String) {
        self.index = index
        self.token = token
    }

    static func open(index: Int, host: String, port: Int, token: String, loop: EventLoop) throws -> SocketIOBenchClient {
        let client = SocketIOBenchClient(index: index, token: token)
        client.connection = try Connection.connect(host: host, port: port, on: loop, id: UInt64(index)) { _ in client }
        let request = "GET /socket.io/?EIO=4&transport=websocket&token=\(token) HTTP/1.1\r\nHost: \(host):\(port)\r\n"
            + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        client.connection.write(Array(request.utf8))
        return client
    }

    /// Sends a Socket.IO EVENT with an ack id; returns the id.
    @discardableResult
    func emitWithAck(_ jsonArray: String) -> Int {
        let id = nextAck
        nextAck += 1
        sendText(Array("42\(id)\(jsonArray)".utf8))
        return id
    }

    func close() {
        state = .closed
        connection.close(.local("bench"))
    }

    // RFC 6455 §5.2: FIN + opcode, MASK bit + length, 4-byte masking key (zero), payload.
    func sendText(_ payload: [UInt8]) {
        var frame: [UInt8] = [0x81]
        frame.reserveCapacity(payload.count + 14)
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            frame.append(0x80 | 126)
            frame.append(UInt8(payload.count >> 8))
            frame.append(UInt8(payload.count & 0xFF))
        } else {
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        frame.append(contentsOf: [0, 0, 0, 0])
        frame.append(contentsOf: payload)
        connection.write(frame)
    }

    // MARK: ConnectionHandler

    func connectionDidRead(_ connection: Connection, _ bytes: UnsafeRawBufferPointer) {
        if inboundStart == inbound.count {
            inbound.removeAll(keepingCapacity: true)
            inboundStart = 0
        }
        inbound.append(contentsOf: bytes)
        if state == .connecting {
            guard let end = Self.headerEnd(inbound) else { return }
            guard inbound.count > 12, inbound[9] == UInt8(ascii: "1"), inbound[10] == UInt8(ascii: "0"), inbound[11] == UInt8(ascii: "1") else {
                fail("upgrade refused: \(String(decoding: inbound.prefix(64), as: UTF8.self))")
                return
            }
            inboundStart = end
            state = .upgraded
        }
        parseFrames()
        if inboundStart > 0 && inboundStart == inbound.count {
            inbound.removeAll(keepingCapacity: true)
            inboundStart = 0
        }
    }

    func connectionDidClose(_ connection: Connection, reason: CloseReason) {
        let was = state
        state = .closed
        if was != .closed { onClose?(self, "\(reason)") }
    }

    private func fail(_ why: String) {
        state = .closed
        connection.close(.local(why))
        onClose?(self, why)
    }

    private static func headerEnd(_ b: [UInt8]) -> Int? {
        guard b.count >= 4 else { return nil }
        for i in 3..<b.count where b[i] == 10 && b[i - 1] == 13 && b[i - 2] == 10 && b[i - 3] == 13 { return i + 1 }
        return nil
    }

    private func parseFrames() {
        while state != .closed {
            let available = inbound.count - inboundStart
            guard available >= 2 else { return }
            let b0 = inbound[inboundStart], b1 = inbound[inboundStart + 1]
            var length = Int(b1 & 0x7F)
            var header = 2
            if length == 126 {
                guard available >= 4 else { return }
                length = Int(inbound[inboundStart + 2]) << 8 | Int(inbound[inboundStart + 3])
                header = 4
            } else if length == 127 {
                guard available >= 10 else { return }
                length = 0
                for i in 0..<8 { length = length << 8 | Int(inbound[inboundStart + 2 + i]) }
                header = 10
            }
            guard available >= header + length else { return }
            let start = inboundStart + header
            inboundStart = start + length
            switch b0 & 0x0F {
            case 0x1, 0x2:
                inbound.withUnsafeBytes { all in engineMessage(UnsafeRawBufferPointer(rebasing: all[start..<(start + length)])) }
            case 0x8:
                fail("websocket close")
            case 0x9:
                var pong: [UInt8] = [0x8A, 0x80 | UInt8(length), 0, 0, 0, 0]
                pong.append(contentsOf: inbound[start..<(start + length)])
                connection.write(pong)
            default:
                break
            }
        }
    }

    // Engine.IO v4 packet types: 0 open, 2 ping, 3 pong, 4 message. Socket.IO v5 inside a message:
    // 0 CONNECT, 2 EVENT, 3 ACK, 4 CONNECT_ERROR.
    private func engineMessage(_ m: UnsafeRawBufferPointer) {
        guard let type = m.first else { return }
        switch type {
        case UInt8(ascii: "0"):
            state = .open
            sendText(Array("40{\"token\":\"\(token)\"}".utf8))
        case UInt8(ascii: "2"):
            sendText([UInt8(ascii: "3")])
        case UInt8(ascii: "4"):
            guard m.count >= 2 else { return }
            switch m[1] {
            case UInt8(ascii: "0"):
                state = .connected
                onConnected?(self)
            case UInt8(ascii: "2"):
                onEvent?(self, m)
            case UInt8(ascii: "3"):
                var id = 0
                var i = 2
                while i < m.count, m[i] >= 48, m[i] <= 57 { id = id * 10 + Int(m[i] - 48); i += 1 }
                onAck?(self, id)
            case UInt8(ascii: "4"):
                fail("connect error: \(String(decoding: m, as: UTF8.self))")
            default:
                break
            }
        default:
            break
        }
    }
}

/// Byte helpers for the hot path (no Foundation).
enum Bytes {
    static func hasPrefix(_ m: UnsafeRawBufferPointer, _ prefix: [UInt8]) -> Bool {
        guard m.count >= prefix.count else { return false }
        for i in 0..<prefix.count where m[i] != prefix[i] { return false }
        return true
    }

    /// Offset just past the first occurrence of `needle` at or after `from`, or nil.
    static func find(_ m: UnsafeRawBufferPointer, _ needle: [UInt8], from: Int = 0) -> Int? {
        guard m.count >= needle.count, let first = needle.first else { return nil }
        var i = from
        let last = m.count - needle.count
        outer: while i <= last {
            if m[i] != first { i += 1; continue }
            for j in 1..<needle.count where m[i + j] != needle[j] { i += 1; continue outer }
            return i + needle.count
        }
        return nil
    }

    /// FNV-1a of `count` bytes at `at` (a compact key for a 36-character UUID).
    static func hash(_ m: UnsafeRawBufferPointer, at: Int, count: Int) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        let end = min(m.count, at + count)
        var i = at
        while i < end {
            h = (h ^ UInt64(m[i])) &* 0x100_0000_01b3
            i += 1
        }
        return h
    }

    /// The hash of the 36-byte UUID string value after `key` (e.g. `"id":`, spaces allowed
    /// before the value's quote), or nil.
    static func idHash(_ m: UnsafeRawBufferPointer, key: [UInt8]) -> UInt64? {
        guard var at = find(m, key) else { return nil }
        while at < m.count && m[at] == 32 { at += 1 }
        guard at < m.count, m[at] == 34, at + 37 <= m.count else { return nil }
        return hash(m, at: at + 1, count: 36)
    }
}
