import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// A user's app stand-in on the realtime side: an Engine.IO v4 polling session with the Socket.IO
/// main namespace connected (Engine.IO v4 / Socket.IO v5 protocol documents), over raw HTTP,
/// because the kit itself has no Socket.IO client. Faults need a connected socket to act on.
enum RawPollingSocket {
    /// Opens the session, sends CONNECT with `token`, and returns the Engine.IO sid once the
    /// server has accepted the CONNECT.
    static func connect(to server: URL, token: String) async throws -> String {
        let base = server.absoluteString + "/socket.io/?EIO=4&transport=polling"
        let (open, openStatus) = try await fetch(URLRequest(url: try XCTUnwrap(URL(string: base))))
        XCTAssertEqual(openStatus, 200, open)
        let handshake = try XCTUnwrap(open.first == "0" ? open.dropFirst().data(using: .utf8) : nil, "not an OPEN packet: \(open)")
        let sid = try XCTUnwrap((try JSONSerialization.jsonObject(with: handshake) as? [String: Any])?["sid"] as? String)
        let session = try XCTUnwrap(URL(string: base + "&sid=" + sid))
        var connect = URLRequest(url: session)
        connect.httpMethod = "POST"
        connect.setValue("text/plain;charset=UTF-8", forHTTPHeaderField: "Content-Type")
        connect.httpBody = Data(("40" + String(decoding: try JSONEncoder().encode(["token": token]), as: UTF8.self)).utf8)
        let (posted, postStatus) = try await fetch(connect)
        XCTAssertEqual(postStatus, 200, posted)
        let (answer, getStatus) = try await fetch(URLRequest(url: session))
        XCTAssertEqual(getStatus, 200, answer)
        XCTAssertTrue(answer.hasPrefix("40{"), "the CONNECT was not accepted: \(answer)")
        return sid
    }

    /// Sends the Socket.IO EVENT `[event, payload]` on session `sid` (no ack asked: what the
    /// server emits in return is read from its event log).
    static func emit(to server: URL, sid: String, _ event: String, _ payload: [String: String]) async throws {
        var post = URLRequest(url: try XCTUnwrap(URL(string: server.absoluteString + "/socket.io/?EIO=4&transport=polling&sid=" + sid)))
        post.httpMethod = "POST"
        post.setValue("text/plain;charset=UTF-8", forHTTPHeaderField: "Content-Type")
        let body = try JSONSerialization.data(withJSONObject: [event, payload])
        post.httpBody = Data("42".utf8) + body
        let (answer, status) = try await fetch(post)
        XCTAssertEqual(status, 200, answer)
    }

    /// One raw exchange: the body as text and the status.
    static func fetch(_ request: URLRequest) async throws -> (String, Int) {
        try await withCheckedThrowingContinuation { c in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let error { return c.resume(throwing: error) }
                c.resume(returning: (String(decoding: data ?? Data(), as: UTF8.self), (response as? HTTPURLResponse)?.statusCode ?? 0))
            }.resume()
        }
    }
}
