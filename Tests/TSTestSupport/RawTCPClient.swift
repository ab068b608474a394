/// A blocking TCP client to 127.0.0.1 for live tests: sends bytes exactly as given and reads
/// with the socket's receive timeout (`SO_RCVTIMEO`), so a test never hangs on a silent server.
/// Test code only; the server under test is the real one, listening on port 0.
// @unchecked Sendable: a test hands a client to at most one thread at a time.
public class RawTCPClient: @unchecked Sendable {
    public let fd: Int32

    public enum ClientError: Error, Equatable { case socket, connect, timeoutOrEOF, badResponse(String) }

    /// What one `read` saw.
    public enum ReadOutcome: Equatable {
        case bytes([UInt8])
        /// EOF, or the peer reset the connection.
        case closed
        /// The receive timeout passed with the connection still open.
        case timedOut
        case failed(Int32)
    }

    /// Connects to `127.0.0.1:port`. `receiveBuffer` sets `SO_RCVBUF` first (a small one lets
    /// a test play a slow consumer); reads time out after `timeoutSeconds`. `sourceAddress` (e.g.
    /// "127.0.0.2", any of 127/8 on Linux) binds the client end first, to appear as another client address.
    public init(port: Int, receiveBuffer: Int32? = nil, timeoutSeconds: Int = 5, sourceAddress: String? = nil) throws {
        var bound = true
        let fd = TestSockets.connectLoopback(port: port) { fd in
            if let sourceAddress { bound = TestSockets.bindSource(fd, address: sourceAddress) }
            if let receiveBuffer { TestSockets.setReceiveBuffer(fd, bytes: receiveBuffer) }
            TestSockets.setReceiveTimeout(fd, seconds: Double(timeoutSeconds))
        }
        guard bound else { if fd >= 0 { close(fd) }; throw ClientError.connect }
        guard fd >= 0 else { throw ClientError.connect }
        self.fd = fd
    }

    deinit { close(fd) }

    public func setReceiveTimeout(_ seconds: Double) {
        TestSockets.setReceiveTimeout(fd, seconds: seconds)
    }

    /// Sends all of `bytes`; false if the connection failed first.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { TestSockets.send(fd, $0) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    @discardableResult
    public func write(_ string: String) -> Bool { write(Array(string.utf8)) }

    /// One `recv` of up to `maxBytes`.
    public func read(maxBytes: Int = 65_536) -> ReadOutcome {
        var buf = [UInt8](repeating: 0, count: maxBytes)
        let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 { return .bytes(Array(buf[0..<n])) }
        if n == 0 { return .closed }
        switch errno {
        case EAGAIN, EWOULDBLOCK: return .timedOut
        case ECONNRESET: return .closed
        case let e: return .failed(e)
        }
    }

    /// Whatever is available (blocking up to the timeout). Empty = EOF, timeout or error.
    public func readSome() -> [UInt8] {
        if case .bytes(let b) = read() { return b }
        return []
    }

    /// Everything until the server closes (or the receive timeout passes).
    public func readUntilClose() -> [UInt8] {
        var out: [UInt8] = []
        while case .bytes(let b) = read() { out += b }
        return out
    }

    /// True if the server closed the connection, discarding anything still to read first;
    /// false if the receive timeout passed with it open.
    public func readEOF() -> Bool {
        while true {
            switch read(maxBytes: 1024) {
            case .bytes: continue
            case .closed: return true
            case .timedOut, .failed: return false
            }
        }
    }
}
