import Foundation
import TSSockets

/// A keep-alive HTTP/1.1 client connection, one request in flight, for triggering writes.
// @unchecked Sendable: every mutable property is touched only on `connection.loop`.
final class HTTPBenchClient: ConnectionHandler, @unchecked Sendable {
    var connection: Connection!
    let host: String
    let port: Int
    private var inbound: [UInt8] = []
    private var completion: ((Int, UnsafeRawBufferPointer) -> Void)?
    var busy: Bool { completion != nil }
    var onClose: ((String) -> Void)?

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `source`: the local address to connect from (`Connection.connect`).
    static func open(host: String, port: Int, loop: EventLoop, id: UInt64, source: String? = nil) throws -> HTTPBenchClient {
        let c = HTTPBenchClient(host: host, port: port)
        c.connection = try Connection.connect(host: host, port: port, on: loop, id: id, source: source) { _ in c }
        return c
    }

    /// Sends a request; `done(status, body)` runs when the whole response arrived. `headers`:
    /// extra header lines, each "Name: value".
    func request(_ method: String, _ path: String, token: String?, body: String? = nil,
                 contentType: String = "application/json", headers: [String] = [],
                 done: @escaping (Int, UnsafeRawBufferPointer) -> Void) {
        precondition(completion == nil, "one request at a time")
        completion = done
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        for h in headers { head += "\(h)\r\n" }
        if let body {
            head += "Content-Type: \(contentType)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        } else {
            head += "Content-Length: 0\r\n\r\n"
        }
        connection.write(Array(head.utf8))
    }

    func connectionDidRead(_ connection: Connection, _ bytes: UnsafeRawBufferPointer) {
        inbound.append(contentsOf: bytes)
        while let done = completion {
            guard let (status, bodyStart, bodyLength) = Self.parse(inbound) else { return }
            let end = bodyStart + bodyLength
            completion = nil
            inbound.withUnsafeBytes { all in done(status, UnsafeRawBufferPointer(rebasing: all[bodyStart..<end])) }
            inbound.removeSubrange(0..<end)
        }
    }

    /// A request in flight when the connection closes completes with status 0 and no body.
    func connectionDidClose(_ connection: Connection, reason: CloseReason) {
        if let done = completion {
            completion = nil
            done(0, UnsafeRawBufferPointer(start: nil, count: 0))
        }
        onClose?("\(reason)")
    }

    /// (status, body offset, body length) of a complete Content-Length response, or nil.
    static func parse(_ b: [UInt8]) -> (Int, Int, Int)? {
        guard b.count >= 12 else { return nil }
        var headerEnd: Int?
        for i in 3..<b.count where b[i] == 10 && b[i - 1] == 13 && b[i - 2] == 10 && b[i - 3] == 13 {
            headerEnd = i + 1
            break
        }
        guard let end = headerEnd else { return nil }
        let status = Int(b[9] - 48) * 100 + Int(b[10] - 48) * 10 + Int(b[11] - 48)
        let head = String(decoding: b[0..<end], as: UTF8.self).lowercased()
        var length = 0
        if let r = head.range(of: "\r\ncontent-length:") {
            let digits = head[r.upperBound...].drop { $0 == " " }.prefix { $0.isNumber }
            length = Int(digits) ?? 0
        }
        guard b.count >= end + length else { return nil }
        return (status, end, length)
    }
}
