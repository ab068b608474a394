/// A WebSocket client for live tests (RFC 6455 client side): does the HTTP upgrade by hand,
/// sends masked frames and reads the server's frames with its own codec (`RawWebSocketFrame`).
// @unchecked Sendable: as RawTCPClient, a test hands a client to at most one thread at a time.
public final class RawWebSocketClient: RawTCPClient, @unchecked Sendable {
    /// The status of the handshake response; 0 before `handshake` or if none arrived.
    public private(set) var status = 0
    /// Bytes read past the response head or the last frame, not yet consumed.
    private var pending: [UInt8] = []

    /// Connects and sends a valid upgrade request for `target`; `status` tells how it went.
    public convenience init(port: Int, target: String, receiveBuffer: Int32? = nil) throws {
        try self.init(port: port, receiveBuffer: receiveBuffer)
        _ = try? handshake(path: target)
    }

    /// Sends a GET upgrade request (by default a valid one, the key from RFC 6455 §1.3) and
    /// returns the response head.
    @discardableResult
    public func handshake(path: String = "/echo", key: String = "dGhlIHNhbXBsZSBub25jZQ==", extraHeaders: String = "") throws -> String {
        write("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\(extraHeaders)\r\n")
        return try readHead()
    }

    /// Reads up to the end of an HTTP response head (setting `status`); keeps the rest for frames.
    public func readHead() throws -> String {
        while true {
            if let end = RawHTTP.headEnd(pending) {
                let head = String(decoding: pending[..<end], as: UTF8.self)
                pending.removeFirst(end)
                let fields = head.split(separator: " ", maxSplits: 2)
                status = fields.count > 1 ? Int(fields[1]) ?? 0 : 0
                return head
            }
            guard case .bytes(let chunk) = read() else { throw ClientError.timeoutOrEOF }
            pending += chunk
        }
    }

    /// Sends one frame, masked (as a client must, RFC 6455 §5.3) unless told otherwise.
    public func sendFrame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0, masked: Bool = true) {
        let key = masked ? RawWebSocketFrame.exampleMask : nil
        write(RawWebSocketFrame(fin: fin, rsv: rsv, opcode: opcode, maskingKey: key, payload: payload).encoded())
    }

    public func send(_ text: String) { sendFrame(opcode: 1, Array(text.utf8)) }
    public func send(binary: [UInt8]) { sendFrame(opcode: 2, binary) }

    /// The next frame from the server, whatever its kind; nil on EOF or timeout.
    public func nextFrame() -> RawWebSocketFrame? {
        if case .frame(let f) = nextFrameOutcome() { return f }
        return nil
    }

    /// A data message or how the wait ended.
    public enum Message: Equatable, Sendable {
        case text(String)
        case binary([UInt8])
        case close
        case timeout
    }

    /// The next text, binary or close frame within `timeout` seconds (pings and pongs are passed
    /// over unanswered; fragments are returned one frame at a time).
    public func receive(timeout: Double = 3) -> Message {
        setReceiveTimeout(timeout)
        while true {
            switch nextFrameOutcome() {
            case .frame(let f) where f.opcode == 1: return .text(String(decoding: f.payload, as: UTF8.self))
            case .frame(let f) where f.opcode == 2: return .binary(f.payload)
            case .frame(let f) where f.opcode == 8: return .close
            case .frame: continue
            case .timedOut: return .timeout
            case .closed: return .close
            }
        }
    }

    /// The next message that is not an Engine.IO ping `2` (each one is answered with `3`).
    public func receiveSkippingPings(timeout: Double = 3) -> Message {
        while true {
            let m = receive(timeout: timeout)
            if m != .text("2") { return m }
            send("3")
        }
    }

    private enum FrameOutcome { case frame(RawWebSocketFrame), timedOut, closed }

    private func nextFrameOutcome() -> FrameOutcome {
        while true {
            if let (frame, used) = RawWebSocketFrame.decode(pending) {
                pending.removeFirst(used)
                return .frame(frame)
            }
            switch read() {
            case .bytes(let chunk): pending += chunk
            case .timedOut: return .timedOut
            case .closed, .failed: return .closed
            }
        }
    }
}
