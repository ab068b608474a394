import TSSockets

/// A minimal Socket.IO v5 / Engine.IO v4 client over a websocket for load generation: a
/// websocket-only session, or the upgrade of a session opened over polling (`open(sid:)`).
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
    /// A Socket.IO ACK (`43<id>[…]`): the ack id and the whole Engine.IO message (valid only during the call).
    var onAck: ((SocketIOBenchClient, Int, UnsafeRawBufferPointer) -> Void)?
    var onClose: ((SocketIOBenchClient, String) -> Void)?
    /// The upgrade of a polling session finished (`5` sent): emits may go on this websocket.
    var onUpgraded: ((SocketIOBenchClient) -> Void)?
    /// The sid of the polling session this websocket upgrades (nil: websocket-only), whether the
    /// server answered the probe (`3probe`), and whether the upgrade finished (`5` sent).
    private var upgradingSid: String?
    private(set) var probed = false
    private(set) var upgraded = false
    /// Polling requests (POST or GET) of the session still in flight: the upgrade's `5` waits
    /// until there are none, as engine.io-client pauses the polling transport (its poll and its
    /// POST finish) before upgrading; a polling request that reaches the server after the upgrade
    /// is refused with a 400.
    var pollsInFlight = 0 {
        didSet { if pollsInFlight == 0 { finishUpgrade() } }
    }
    /// The HTTP 101 arrived (RFC 6455 §4.1); frames follow.
    private var handshakeDone = false

    init(index: Int, token: String) {
        self.index = index
        self.token = token
    }

    /// Opens the websocket. Without `sid` it is a websocket-only session (token in the query, and
    /// the CONNECT sent on the Engine.IO open). With `sid` it upgrades an Engine.IO session opened
    /// over polling (Engine.IO v4 "upgrade": `2probe`, the server's `3probe`, then `5`); the
    /// caller sends the CONNECT, and packets that arrive on the session's long-poll go through
    /// `receiveEnginePacket`. `source`: the local address to connect from.
    static func open(index: Int, host: String, port: Int, token: String, loop: EventLoop, sid: String? = nil,
                     source: String? = nil) throws -> SocketIOBenchClient {
        let client = SocketIOBenchClient(index: index, token: token)
        client.upgradingSid = sid
        client.connection = try Connection.connect(host: host, port: port, on: loop, id: UInt64(index), source: source) { _ in client }
        let query = sid.map { "sid=\($0)" } ?? "token=\(token)"
        let request = "GET /socket.io/?EIO=4&transport=websocket&\(query) HTTP/1.1\r\nHost: \(host):\(port)\r\n"
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
        if !handshakeDone {
            guard let end = Self.headerEnd(inbound) else { return }
            guard inbound.count > 12, inbound[9] == UInt8(ascii: "1"), inbound[10] == UInt8(ascii: "0"), inbound[11] == UInt8(ascii: "1") else {
                fail("upgrade refused: \(String(decoding: inbound.prefix(64), as: UTF8.self))")
                return
            }
            inboundStart = end
            handshakeDone = true
            if state == .connecting { state = .upgraded }  // a CONNECT answered on the long-poll may have come first
            if upgradingSid != nil { sendText(Array("2probe".utf8)) }
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

    private func finishUpgrade() {
        guard probed, !upgraded, pollsInFlight == 0, state != .closed else { return }
        sendText([UInt8(ascii: "5")])
        upgraded = true
        onUpgraded?(self)
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
                inbound.withUnsafeBytes { all in receiveEnginePacket(UnsafeRawBufferPointer(rebasing: all[start..<(start + length)])) }
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

    // Engine.IO v4 packet types: 0 open, 2 ping, 3 pong, 4 message, 5 upgrade, 6 noop. Socket.IO
    // v5 inside a message: 0 CONNECT, 2 EVENT, 3 ACK, 4 CONNECT_ERROR.
    /// One Engine.IO packet, from this websocket or from the session's long-poll before the upgrade.
    func receiveEnginePacket(_ m: UnsafeRawBufferPointer) {
        guard let type = m.first else { return }
        switch type {
        case UInt8(ascii: "0"):
            state = .open
            sendText(Array("40{\"token\":\"\(token)\"}".utf8))
        case UInt8(ascii: "2"):
            // A ping that came on the long-poll before the upgrade goes unanswered here; the
            // server allows pingTimeout (20 s) and the next ping comes on the websocket.
            if upgradingSid == nil || upgraded { sendText([UInt8(ascii: "3")]) }
        case UInt8(ascii: "3"):
            if upgradingSid != nil, !probed, m.count == 6, Bytes.hasPrefix(m, Array("3probe".utf8)) {
                probed = true
                finishUpgrade()
            }
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
                onAck?(self, id, m)
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
