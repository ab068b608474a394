import TSTestSupport
import XCTest

/// A tiny blocking HTTP/1.1 test client over a raw socket (receive timeout 5 s).
final class RawClient {
    let fd: Int32
    private var inbox: [UInt8] = []

    struct Response {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]
        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
        var bodyString: String { String(decoding: body, as: UTF8.self) }
    }

    struct ClientError: Error, CustomStringConvertible {
        let description: String
    }

    /// `sourceAddress` binds the client's end first (e.g. "127.0.0.2": another loopback
    /// address, to test per-address limits); `receiveBuffer` sets SO_RCVBUF (a slow reader).
    init(port: Int, receiveTimeoutSeconds: Int = 5, sourceAddress: String? = nil, receiveBuffer: Int32? = nil) throws {
        var bound = true
        let fd = TestSockets.connectLoopback(port: port) { fd in
            if let receiveBuffer { TestSockets.setReceiveBuffer(fd, bytes: receiveBuffer) }
            if let sourceAddress { bound = TestSockets.bindSource(fd, address: sourceAddress) }
            TestSockets.setReceiveTimeout(fd, seconds: Double(receiveTimeoutSeconds))
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        guard bound else { if fd >= 0 { close(fd) }; throw ClientError(description: "bind \(sourceAddress ?? "") failed") }
        guard fd >= 0 else { throw ClientError(description: "connect failed errno \(errno)") }
        self.fd = fd
    }

    deinit { close(fd) }

    func send(_ bytes: [UInt8]) throws {
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { TestSockets.send(fd, $0) }
            if n <= 0 { throw ClientError(description: "send failed errno \(errno)") }
            off += n
        }
    }

    func send(_ string: String) throws { try send(Array(string.utf8)) }

    /// Reads more bytes; returns false on EOF/reset, throws on timeout.
    @discardableResult
    private func fill() throws -> Bool {
        var buf = [UInt8](repeating: 0, count: 65536)
        let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 {
            inbox.append(contentsOf: buf[0..<n])
            return true
        }
        if n == 0 { return false }
        if errno == EAGAIN || errno == EWOULDBLOCK { throw ClientError(description: "receive timeout") }
        return false // ECONNRESET etc.
    }

    /// Reads one response (Content-Length framed; `headRequest` means no body follows).
    func readResponse(headRequest: Bool = false) throws -> Response {
        while true {
            if let end = findHeadEnd() {
                let head = String(decoding: inbox[0..<end], as: UTF8.self)
                var lines = head.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst()
                let parts = statusLine.split(separator: " ")
                guard parts.count >= 2, let status = Int(parts[1]) else { throw ClientError(description: "bad status line \(statusLine)") }
                var headers: [(String, String)] = []
                for line in lines where !line.isEmpty {
                    guard let c = line.firstIndex(of: ":") else { continue }
                    headers.append((String(line[..<c]), line[line.index(after: c)...].trimmingCharacters(in: .whitespaces)))
                }
                var length = 0
                if !headRequest, status >= 200, status != 204, status != 304,
                   let cl = headers.first(where: { $0.0.lowercased() == "content-length" }) {
                    length = Int(cl.1) ?? 0
                }
                while inbox.count < end + 4 + length {
                    if try !fill() { throw ClientError(description: "EOF in body") }
                }
                let body = Array(inbox[(end + 4)..<(end + 4 + length)])
                inbox.removeFirst(end + 4 + length)
                return Response(status: status, headers: headers, body: body)
            }
            if try !fill() { throw ClientError(description: "EOF before response (buffered \(inbox.count))") }
        }
    }

    private func findHeadEnd() -> Int? {
        guard inbox.count >= 4 else { return nil }
        for i in 0...(inbox.count - 4) where inbox[i] == 13 && inbox[i + 1] == 10 && inbox[i + 2] == 13 && inbox[i + 3] == 10 {
            return i
        }
        return nil
    }

    /// True when the server closes the connection (EOF or reset) before `timeout` seconds.
    func waitForClose() -> Bool {
        while true {
            do {
                if try !fill() { return true }
            } catch {
                return false
            }
        }
    }

    var bufferedCount: Int { inbox.count }

    /// Reads and discards until EOF/reset (true) or a receive timeout (false); counts the bytes.
    func drainUntilClose() -> (closed: Bool, bytes: Int) {
        var total = inbox.count
        inbox.removeAll()
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { total += n; continue }
            if n == 0 { return (true, total) }
            if errno == EAGAIN || errno == EWOULDBLOCK { return (false, total) }
            return (true, total)
        }
    }
}

func request(_ method: String = "GET", _ path: String, headers: [String] = [], body: String = "") -> String {
    var s = "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\n"
    for h in headers { s += h + "\r\n" }
    if !body.isEmpty { s += "Content-Length: \(body.utf8.count)\r\n" }
    return s + "\r\n" + body
}
