import Foundation
import TSCrypto
import TSJSON
import TSTestSupport
import XCTest

/// Register, login, me and token rejection over real HTTP (docs/api.md, "Conventions" and "Auth").
final class AuthAPITests: LiveServerTestCase, @unchecked Sendable {  // the invariant is LiveServerTestCase's
    func testRegisterLoginMe() async throws {
        let r = try await api.post("/api/auth/register", ["username": "john.doe", "password": "correct horse", "firstName": "John"])
        XCTAssertEqual(r.status, 201)
        XCTAssertNotNil(r.header("X-Request-Id"))
        let session = try r.decode(DataEnvelope<SessionDTO>.self).data
        XCTAssertEqual(session.user, UserDTO(id: session.user.id, username: "john.doe", firstName: "John", avatarUrl: nil))
        XCTAssertEqual(Set(r.json["data"]?["user"]?.objectValue?.keys ?? []), ContractKeys.user)

        let login = try await api.post("/api/auth/login", ["username": "john.doe", "password": "correct horse"])
        XCTAssertEqual(login.status, 200)
        let token = try login.decode(DataEnvelope<SessionDTO>.self).data.token
        let me = try await api.get("/api/auth/me", token: token)
        XCTAssertEqual(me.status, 200)
        XCTAssertEqual(try me.decode(DataEnvelope<UserDTO>.self).data.id, session.user.id)
        // Written as bytes; the same bytes as the tree of the user's JSON in the data envelope.
        let tree: JSONValue = ["data": ["id": .string(session.user.id), "username": "john.doe", "firstName": "John", "avatarUrl": .null]]
        XCTAssertEqual([UInt8](me.body), tree.serialized(), String(decoding: me.body, as: UTF8.self))
        XCTAssertEqual(me.header("Content-Type"), "application/json; charset=utf-8")
    }

    func testDuplicateUsernameIs409() async throws {
        _ = try await api.register("dupe")
        let r = try await api.post("/api/auth/register", ["username": "dupe", "password": "password-123"])
        XCTAssertEqual(r.status, 409)
        XCTAssertEqual(try r.decode(ErrorEnvelope.self).error.code, "CONFLICT")
    }

    func testRegistrationValidationNamesTheField() async throws {
        let cases: [(JSONValue, String)] = [
            (["username": "ab", "password": "password-123"], "username"),
            (["username": "Upper", "password": "password-123"], "username"),
            (["username": "okname", "password": "short"], "password"),
            (["password": "password-123"], "username"),
            (["username": "okname", "password": 12345678], "password"),
        ]
        for (body, field) in cases {
            let r = try await api.post("/api/auth/register", body)
            XCTAssertEqual(r.status, 400, "\(body)")
            let e = try r.decode(ErrorEnvelope.self).error
            XCTAssertEqual(e.code, "VALIDATION_ERROR")
            XCTAssertEqual(e.field, field, "\(body)")
            XCTAssertTrue(e.message.hasPrefix(field), e.message)
        }
        let notJSON = try await api.send("POST", "/api/auth/register", rawBody: Data("{nope".utf8), headers: ["Content-Type": "application/json"])
        XCTAssertEqual(notJSON.status, 400)
        let wrongType = try await api.send("POST", "/api/auth/register", rawBody: Data("a=b".utf8), headers: ["Content-Type": "text/plain"])
        XCTAssertEqual(wrongType.status, 415)
        // A JSON body without Content-Type is accepted (URLSession on Linux would add a form type, so use a raw socket).
        let body = #"{"username":"notype","password":"password-123"}"#
        let raw = try RawHTTP.exchange(port: live.port, "POST /api/auth/register HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        XCTAssertTrue(raw.hasPrefix("HTTP/1.1 201 "), raw)
    }

    func testWrongPasswordAndUnknownUserGiveTheSame401() async throws {
        _ = try await api.register("realuser")
        let wrong = try await api.post("/api/auth/login", ["username": "realuser", "password": "not-the-password"])
        let unknown = try await api.post("/api/auth/login", ["username": "ghost", "password": "not-the-password"])
        XCTAssertEqual(wrong.status, 401)
        XCTAssertEqual(unknown.status, 401)
        XCTAssertEqual(try wrong.decode(ErrorEnvelope.self).error.message, try unknown.decode(ErrorEnvelope.self).error.message)
    }

    func testRepeatedFailedLoginsAre429WithRetryAfter() async throws {
        await live.stop()
        live = try LiveServer(overrides: ["auth.maxFailedLogins": 3, "auth.failedLoginWindowSeconds": 120])
        api = APIClient(base: live.base)
        _ = try await api.register("victim")
        for _ in 0..<3 {
            let r = try await api.post("/api/auth/login", ["username": "victim", "password": "guess-guess"])
            XCTAssertEqual(r.status, 401)
        }
        let limited = try await api.post("/api/auth/login", ["username": "victim", "password": "password-123"])
        XCTAssertEqual(limited.status, 429, "even the right password waits once the limit is hit")
        XCTAssertEqual(try limited.decode(ErrorEnvelope.self).error.code, "RATE_LIMITED")
        let retry = Int(limited.header("Retry-After") ?? "")
        XCTAssertNotNil(retry)
        XCTAssertTrue((1...120).contains(retry ?? 0))
    }

    func testBadTokensAre401() async throws {
        let user = try await api.register("tokenuser")
        let parts = user.token.split(separator: ".").map(String.init)
        XCTAssertEqual(parts.count, 3)
        guard parts.count == 3 else { return }
        let noneHeader = Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8))
        let hs512Header = Base64URL.encode(Array(#"{"alg":"HS512","typ":"JWT"}"#.utf8))
        var sig = Array(parts[2])
        sig[sig.count / 2] = sig[sig.count / 2] == "A" ? "B" : "A"
        let forgedPayload = Base64URL.encode(Array(#"{"sub":"someone-else","iat":1,"exp":99999999999}"#.utf8))
        let expired = await live.server.domain.auth.issueToken(userId: user.id, lifetimeSeconds: -60)
        let bad: [String: String?] = [
            "missing": nil,
            "garbage": "not-a-jwt",
            "alg none": "\(noneHeader).\(parts[1]).",
            "alg HS512": "\(hs512Header).\(parts[1]).\(parts[2])",
            "tampered signature": "\(parts[0]).\(parts[1]).\(String(sig))",
            "tampered payload": "\(parts[0]).\(forgedPayload).\(parts[2])",
            "expired": expired,
        ]
        for (name, token) in bad {
            var headers: [String: String] = [:]
            if let token { headers["Authorization"] = "Bearer \(token)" }
            let r = try await api.send("GET", "/api/auth/me", headers: headers)
            XCTAssertEqual(r.status, 401, name)
            XCTAssertEqual(try r.decode(ErrorEnvelope.self).error.code, "UNAUTHORIZED", name)
        }
        let ok = try await api.get("/api/auth/me", token: user.token)
        XCTAssertEqual(ok.status, 200)
    }

    func testHealth() async throws {
        let r = try await api.get("/health")
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.json["status"], "ok")
        XCTAssertEqual(r.json["database"], "ok")
        XCTAssertNotNil(r.json["version"]?.stringValue)
        XCTAssertNotNil(r.json["uptimeSeconds"]?.intValue)
        // The members in the order the degraded answer's tree has them.
        let expected: JSONValue = ["status": "ok", "version": r.json["version"] ?? .null, "uptimeSeconds": r.json["uptimeSeconds"] ?? .null,
                                   "database": "ok"]
        XCTAssertEqual([UInt8](r.body), expected.serialized(), String(decoding: r.body, as: UTF8.self))
        XCTAssertEqual(r.header("Content-Type"), "application/json; charset=utf-8")
    }

    /// A burst of probes costs about one `SELECT 1` a second, not one each (Database.health
    /// reuses a good ping for a second): the reads the pool completed grow by at most one per
    /// started second of the burst, plus the first.
    func testHealthProbesShareOnePingASecond() async throws {
        let started = Date()
        let before = live.server.db.readPool.completed
        for _ in 0..<50 {
            let r = try await api.get("/health")
            XCTAssertEqual(r.status, 200)
            XCTAssertEqual(r.json["database"], "ok")
        }
        let reads = live.server.db.readPool.completed - before
        let seconds = UInt64(Date().timeIntervalSince(started).rounded(.up))
        XCTAssertLessThanOrEqual(reads, 1 + seconds, "\(reads) reads for 50 probes in \(seconds) s")
    }
}
