import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TSJSON

/// A minimal Socket.IO v5 client over Engine.IO v4 long-polling, written from the protocol
/// (handshake `0{…}`, CONNECT `40{auth}`, EVENT `42[…]`, ACK `43id[…]`, packets joined by
/// U+001E): enough for tests that need a connected, room-joined socket. Only call `receive()`
/// when a packet is due: an empty poll waits up to the server's pingInterval.
struct PollingSocket: Sendable {
    let base: String
    let engineSid: String

    struct Failure: Error, CustomStringConvertible { let description: String }

    static func connect(base: String, token: String) async throws -> PollingSocket {
        let open = try await request("GET", base + "/socket.io/?EIO=4&transport=polling")
        guard open.first == "0", let handshake = try? JSONValue.parse(String(open.dropFirst())),
              let sid = handshake["sid"]?.stringValue else { throw Failure(description: "bad handshake: \(open)") }
        let socket = PollingSocket(base: base, engineSid: sid)
        try await socket.send("40" + JSONValue.object(["token": .string(token)]).serializedString())
        let packets = try await socket.receive()
        guard packets.contains(where: { $0.hasPrefix("40{") }) else { throw Failure(description: "not connected: \(packets)") }
        return socket
    }

    var url: String { base + "/socket.io/?EIO=4&transport=polling&sid=" + engineSid }

    func send(_ packet: String) async throws {
        let r = try await Self.request("POST", url, body: packet)
        guard r == "ok" else { throw Failure(description: "POST answered \(r)") }
    }

    /// Emits `event` with an ack id.
    func emit(_ event: String, _ payload: JSONValue, ackId: Int) async throws {
        try await send("42\(ackId)" + JSONValue.array([.string(event), payload]).serializedString())
    }

    /// The Socket.IO packets of one poll.
    func receive() async throws -> [String] {
        try await Self.request("GET", url).split(separator: "\u{1e}").map(String.init)
    }

    /// Polls until a packet satisfies `match` (at most `polls` polls).
    func receive(until match: (String) -> Bool, polls: Int = 5) async throws -> [String] {
        var all: [String] = []
        for _ in 0..<polls {
            all += try await receive()
            if all.contains(where: match) { return all }
        }
        throw Failure(description: "no matching packet in \(all)")
    }

    static func request(_ method: String, _ url: String, body: String? = nil) async throws -> String {
        var r = URLRequest(url: URL(string: url)!)
        r.httpMethod = method
        r.timeoutInterval = 30
        if let body {
            r.httpBody = Data(body.utf8)
            r.setValue("text/plain;charset=UTF-8", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: r)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw Failure(description: "\(method) \(url) answered \((response as? HTTPURLResponse)?.statusCode ?? 0): \(String(decoding: data, as: UTF8.self))")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
