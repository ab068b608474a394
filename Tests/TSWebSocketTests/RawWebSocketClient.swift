#if canImport(Glibc)
import Glibc
#endif
import XCTest
@testable import TSWebSocket

/// A minimal blocking TCP client for live tests: does the HTTP upgrade by hand and speaks masked
/// frames, reading the server's frames with the library's own decoder (client-side, so unmasked
/// frames are expected).
final class RawWebSocketClient {
    let fd: Int32
    private var decoder = WebSocketFrameDecoder(maxFrameSize: 64 << 20)
    /// Bytes after the response head not yet consumed.
    private var pending: [UInt8] = []

    init(port: Int, timeoutSeconds: Int = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClientError.socket }
        var tv = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { close(fd); throw ClientError.connect }
    }

    deinit { close(fd) }

    enum ClientError: Error { case socket, connect, timeoutOrEOF, badResponse(String) }

    func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            offset += n
        }
    }

    func write(_ string: String) { write(Array(string.utf8)) }

    /// Reads whatever is available (blocking up to the timeout). Empty = EOF or timeout.
    func readSome() -> [UInt8] {
        var buf = [UInt8](repeating: 0, count: 65_536)
        let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return n > 0 ? Array(buf[0..<n]) : []
    }

    /// One raw `recv`: (result, errno). -1/EAGAIN means the receive timeout passed with the
    /// connection still open.
    func recvRaw() -> (Int, Int32) {
        var buf = [UInt8](repeating: 0, count: 1024)
        let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return (n, n < 0 ? errno : 0)
    }

    /// Sends a GET upgrade request with `headers` (defaults are a valid handshake) and returns
    /// the response head.
    func handshake(path: String = "/echo", key: String = "dGhlIHNhbXBsZSBub25jZQ==", extraHeaders: String = "") throws -> String {
        write("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\(extraHeaders)\r\n")
        return try readHead()
    }

    /// Reads up to the end of an HTTP response head; keeps the rest for frame decoding.
    func readHead() throws -> String {
        var data: [UInt8] = []
        while true {
            if let end = findHeadEnd(data) {
                decoder.append(Array(data[end...]))
                return String(decoding: data[..<end], as: UTF8.self)
            }
            let chunk = readSome()
            if chunk.isEmpty { throw ClientError.timeoutOrEOF }
            data += chunk
        }
    }

    private func findHeadEnd(_ d: [UInt8]) -> Int? {
        guard d.count >= 4 else { return nil }
        for i in 0...(d.count - 4) where d[i] == 13 && d[i + 1] == 10 && d[i + 2] == 13 && d[i + 3] == 10 { return i + 4 }
        return nil
    }

    /// The next frame from the server, or nil on EOF/timeout.
    func readFrame() throws -> WebSocketFrame? {
        while true {
            if let frame = try decoder.nextFrame() { return frame }
            let chunk = readSome()
            if chunk.isEmpty { return nil }
            decoder.append(chunk)
        }
    }

    /// True if the server closed the TCP connection (EOF) with nothing more to read.
    func readEOF() -> Bool {
        var buf = [UInt8](repeating: 0, count: 1024)
        while true {
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET }
        }
    }

    func sendFrame(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0, masked: Bool = true) {
        write(clientFrame(opcode, payload, fin: fin, rsv: rsv, masked: masked))
    }
}
