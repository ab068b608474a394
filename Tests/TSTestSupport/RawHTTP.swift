import Foundation

/// HTTP/1.1 over `RawTCPClient`: requests written byte for byte (so a test can send what a
/// high-level client would "fix": missing headers, odd framing), responses parsed loosely.
public enum RawHTTP {
    public struct Response: Sendable {
        public var status: Int
        public var headers: [String: String]  // lower-cased names
        public var body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Sends `text` on a fresh connection and returns everything the server writes until it closes.
    public static func exchange(port: Int, _ text: String, timeoutSeconds: Int = 5) throws -> String {
        let client = try RawTCPClient(port: port, timeoutSeconds: timeoutSeconds)
        guard client.write(text) else { throw RawTCPClient.ClientError.badResponse("send failed") }
        return String(decoding: client.readUntilClose(), as: UTF8.self)
    }

    /// One request on a fresh connection (`Connection: close`, `Content-Length` always sent),
    /// read until the response is complete or the server closes. Status 0 if nothing parseable came back.
    public static func request(port: Int, _ method: String, _ target: String, body: [UInt8] = [],
                               headers: [String: String] = [:], sourceAddress: String? = nil) -> Response {
        let failed = Response(status: 0, headers: [:], body: [])
        guard let client = try? RawTCPClient(port: port, timeoutSeconds: 10, sourceAddress: sourceAddress) else { return failed }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        head += "\r\n"
        client.write(Array(head.utf8) + body)
        var data: [UInt8] = []
        while case .bytes(let chunk) = client.read() {
            data += chunk
            if let r = parse(data), r.complete { return r.response }
        }
        return parse(data)?.response ?? failed
    }

    /// Parses a response whose head is complete; `complete` once `Content-Length` bytes (or, without
    /// one, whatever is there) of body have arrived.
    public static func parse(_ data: [UInt8]) -> (response: Response, complete: Bool)? {
        guard let end = headEnd(data) else { return nil }
        let head = String(decoding: data[..<(end - 4)], as: UTF8.self).components(separatedBy: "\r\n")
        let fields = head[0].split(separator: " ")
        let status = fields.count > 1 ? Int(fields[1]) ?? 0 : 0
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let c = line.firstIndex(of: ":") else { continue }
            headers[line[..<c].lowercased()] = line[line.index(after: c)...].trimmingCharacters(in: .whitespaces)
        }
        let body = Array(data[end...])
        let length = Int(headers["content-length"] ?? "") ?? body.count
        return (Response(status: status, headers: headers, body: Array(body.prefix(length))), body.count >= length)
    }

    /// The index just past the `\r\n\r\n` that ends a message head, if it has arrived.
    public static func headEnd(_ data: [UInt8]) -> Int? {
        guard data.count >= 4 else { return nil }
        for i in 0...(data.count - 4) where data[i] == 13 && data[i + 1] == 10 && data[i + 2] == 13 && data[i + 3] == 10 {
            return i + 4
        }
        return nil
    }
}
