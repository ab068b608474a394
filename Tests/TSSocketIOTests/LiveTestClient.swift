// Copy of Tests/TSEngineIOTests/LiveTestClient.swift (test targets cannot share files).
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest

/// Minimal blocking HTTP/1.1 and WebSocket clients over POSIX sockets for live tests (test
/// code only; the server under test is the real one on port 0).
struct TestHTTPResponse {
    var status: Int
    var headers: [String: String]  // lower-cased names
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
}

enum TestNet {
    static func connect(port: Int, receiveBuffer: Int32? = nil, timeoutSeconds: Int = 5) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        precondition(fd >= 0)
        if var rb = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rb, socklen_t(MemoryLayout<Int32>.size))
        }
        var tv = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        precondition(rc == 0, "connect failed")
        return fd
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            off += n
        }
    }

    /// One HTTP request on a fresh connection (`Connection: close`), read to EOF.
    static func request(port: Int, _ method: String, _ target: String, body: [UInt8] = [], headers: [String: String] = [:]) -> TestHTTPResponse {
        let fd = connect(port: port, timeoutSeconds: 10)
        defer { close(fd) }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        head += "\r\n"
        writeAll(fd, Array(head.utf8) + body)
        var data: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            data.append(contentsOf: buf[0..<n])
            if let r = parse(data), r.complete { return r.response }
        }
        return parse(data)?.response ?? TestHTTPResponse(status: 0, headers: [:], body: [])
    }

    static func parse(_ data: [UInt8]) -> (response: TestHTTPResponse, complete: Bool)? {
        guard let end = data.firstRange(of: [13, 10, 13, 10]) else { return nil }
        let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(head[0].split(separator: " ")[1]) ?? 0
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let c = line.firstIndex(of: ":") else { continue }
            headers[line[..<c].lowercased()] = line[line.index(after: c)...].trimmingCharacters(in: .whitespaces)
        }
        let body = Array(data[end.upperBound...])
        let length = Int(headers["content-length"] ?? "") ?? body.count
        return (TestHTTPResponse(status: status, headers: headers, body: Array(body.prefix(length))), body.count >= length)
    }

    /// Runs `body` on another thread; `wait()` returns its result.
    static func async<T: Sendable>(_ body: @escaping @Sendable () -> T) -> TestFuture<T> {
        let f = TestFuture<T>()
        Thread.detachNewThread { f.set(body()) }
        return f
    }
}

final class TestFuture<T: Sendable>: @unchecked Sendable {
    private let cond = NSCondition()
    private var value: T?
    func set(_ v: T) { cond.lock(); value = v; cond.broadcast(); cond.unlock() }
    func wait(timeout: TimeInterval = 10) -> T? {
        cond.lock(); defer { cond.unlock() }
        let deadline = Date().addingTimeInterval(timeout)
        while value == nil { if !cond.wait(until: deadline) { break } }
        return value
    }
}

enum TestWSMessage: Equatable {
    case text(String)
    case binary([UInt8])
    case close
    case timeout
}

/// A WebSocket client (RFC 6455 client side: masked frames).
// @unchecked Sendable: a test hands a socket to at most one thread at a time.
final class TestWebSocket: @unchecked Sendable {
    let fd: Int32
    let status: Int
    private var buffer: [UInt8] = []

    init(port: Int, target: String, receiveBuffer: Int32? = nil) {
        let fd = TestNet.connect(port: port, receiveBuffer: receiveBuffer)
        self.fd = fd
        let req = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        TestNet.writeAll(fd, Array(req.utf8))
        var data: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        var st = 0
        var leftover: [UInt8] = []
        while true {
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            data.append(contentsOf: buf[0..<n])
            if let end = data.firstRange(of: [13, 10, 13, 10]) {
                let line = String(decoding: data[..<end.lowerBound], as: UTF8.self)
                st = Int(line.split(separator: " ")[1]) ?? 0
                if st != 101, let r = TestNet.parse(data), !r.complete { continue }
                leftover = st == 101 ? Array(data[end.upperBound...]) : []
                break
            }
        }
        status = st
        buffer = leftover
    }

    deinit { close(fd) }

    func sendFrame(opcode: UInt8, _ payload: [UInt8]) {
        var f: [UInt8] = [0x80 | opcode]
        let mask: [UInt8] = [1, 2, 3, 4]
        if payload.count < 126 { f.append(0x80 | UInt8(payload.count)) } else if payload.count <= 0xFFFF {
            f.append(0x80 | 126); f.append(UInt8(payload.count >> 8)); f.append(UInt8(payload.count & 0xFF))
        } else {
            f.append(0x80 | 127)
            for s in stride(from: 56, through: 0, by: -8) { f.append(UInt8((UInt64(payload.count) >> UInt64(s)) & 0xFF)) }
        }
        f.append(contentsOf: mask)
        for (i, b) in payload.enumerated() { f.append(b ^ mask[i % 4]) }
        TestNet.writeAll(fd, f)
    }

    func send(_ text: String) { sendFrame(opcode: 1, Array(text.utf8)) }
    func send(binary: [UInt8]) { sendFrame(opcode: 2, binary) }

    /// Next data message (pings answered, server pings `2` returned as text like any other).
    func receive(timeout: Double = 3) -> TestWSMessage {
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        while true {
            if let (op, payload, used) = frame() {
                buffer.removeFirst(used)
                switch op {
                case 1: return .text(String(decoding: payload, as: UTF8.self))
                case 2: return .binary(payload)
                case 8: return .close
                default: continue
                }
            }
            var buf = [UInt8](repeating: 0, count: 65536)
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return .close }
            if n < 0 { return errno == EAGAIN || errno == EWOULDBLOCK ? .timeout : .close }
            buffer.append(contentsOf: buf[0..<n])
        }
    }

    /// Next message that is not a server ping `2`.
    func receiveSkippingPings(timeout: Double = 3) -> TestWSMessage {
        while true {
            let m = receive(timeout: timeout)
            if m != .text("2") { return m }
            send("3")
        }
    }

    private func frame() -> (UInt8, [UInt8], Int)? {
        guard buffer.count >= 2 else { return nil }
        let op = buffer[0] & 0x0F
        var len = Int(buffer[1] & 0x7F)
        var off = 2
        if len == 126 {
            guard buffer.count >= 4 else { return nil }
            len = Int(buffer[2]) << 8 | Int(buffer[3]); off = 4
        } else if len == 127 {
            guard buffer.count >= 10 else { return nil }
            len = 0
            for i in 2..<10 { len = len << 8 | Int(buffer[i]) }
            off = 10
        }
        guard buffer.count >= off + len else { return nil }
        return (op, Array(buffer[off..<off + len]), off + len)
    }
}
