import XCTest
import TSJSON
import TSSockets
import TSTestSupport
@testable import TSHTTP

final class RouterTests: XCTestCase {
    func makeRouter() -> Router {
        var b = RouterBuilder()
        b.get("/api/rooms/:roomId") { req in .text("room \(req.parameters["roomId"] ?? "")") }
        b.get("/api/rooms/my-rooms") { _ in .text("mine") }
        b.patch("/api/rooms/:roomId") { _ in .text("patched") }
        b.delete("/api/rooms/:roomId/elements/:elementId") { req in
            .text("\(req.parameters["roomId"]!)/\(req.parameters["elementId"]!) \(req.routePattern!)")
        }
        b.get("/socket.io/*") { req in .text("sio[\(req.parameters["*"] ?? "nil")]") }
        b.post("/socket.io/*") { _ in .text("sio-post") }
        b.get("/boom") { _ in throw CancellationError() }
        b.get("/typed") { _ in throw HTTPError.conflict("taken") }
        return b.freeze()
    }

    func body(_ r: HTTPResponse) -> String { String(decoding: r.body, as: UTF8.self) }

    func testMatching() async {
        let r = makeRouter()
        var resp = await r.respond(to: HTTPRequest(method: .GET, target: "/api/rooms/abc%20d?x=1"))
        XCTAssertEqual(body(resp), "room abc d")
        XCTAssertEqual(resp.routePattern, "/api/rooms/:roomId")
        resp = await r.respond(to: HTTPRequest(method: .GET, target: "/api/rooms/my-rooms"))
        XCTAssertEqual(body(resp), "mine", "literal beats parameter regardless of order")
        resp = await r.respond(to: HTTPRequest(method: .DELETE, target: "/api/rooms/r1/elements/e1"))
        XCTAssertEqual(body(resp), "r1/e1 /api/rooms/:roomId/elements/:elementId")
        for (path, expected) in [("/socket.io", "sio[]"), ("/socket.io/", "sio[]"), ("/socket.io/?EIO=4", "sio[]"), ("/socket.io/a/b", "sio[a/b]")] {
            resp = await r.respond(to: HTTPRequest(method: .GET, target: path))
            XCTAssertEqual(body(resp), expected, path)
        }
    }

    /// An immediate route answers GET, and HEAD when the pattern has no HEAD route of its own, at
    /// its exact path; its handler's nil, another spelling of the path or another method leave the
    /// request to the async path, which answers it.
    func testImmediateRoutes() async {
        let answer = LockedValue(true)
        var b = RouterBuilder()
        b.get("/ping", immediate: { _ in answer.withLock { $0 } ? .text("immediate") : nil }) { _ in .text("async") }
        b.get("/both", immediate: { _ in .text("immediate") }) { _ in .text("async") }
        b.head("/both") { _ in .text("head") }
        b.get("/api/rooms/:roomId") { _ in .text("room") }
        let r = b.freeze()
        let ping = r.respondImmediately(to: HTTPRequest(method: .GET, target: "/ping?x=1"))
        XCTAssertEqual(ping.map(body), "immediate")
        XCTAssertEqual(ping?.routePattern, "/ping", "the access log and metrics name the route")
        XCTAssertEqual(r.respondImmediately(to: HTTPRequest(method: .HEAD, target: "/ping")).map(body), "immediate",
                       "HEAD is GET where the pattern has no HEAD route (RFC 9110 §9.3.2)")
        XCTAssertNil(r.respondImmediately(to: HTTPRequest(method: .HEAD, target: "/both")), "the pattern's own HEAD route answers HEAD")
        XCTAssertEqual(r.respondImmediately(to: HTTPRequest(method: .GET, target: "/both")).map(body), "immediate")
        for (method, target) in [(HTTPMethod.GET, "/ping/"), (.POST, "/ping"), (.GET, "/api/rooms/x"), (.GET, "/nope")] {
            XCTAssertNil(r.respondImmediately(to: HTTPRequest(method: method, target: target)), "\(method) \(target)")
        }
        var resp = await r.respond(to: HTTPRequest(method: .GET, target: "/ping/"))
        XCTAssertEqual(body(resp), "async", "another spelling of the path: the async path answers")
        answer.withLock { $0 = false }
        XCTAssertNil(r.respondImmediately(to: HTTPRequest(method: .GET, target: "/ping")))
        resp = await r.respond(to: HTTPRequest(method: .GET, target: "/ping"))
        XCTAssertEqual(body(resp), "async")
        XCTAssertNil(makeRouter().respondImmediately(to: HTTPRequest(method: .GET, target: "/api/rooms/my-rooms")),
                     "a router without immediate routes answers nothing immediately")
    }

    /// Wrapping a route's handler (middleware in front of it) drops its immediate answer, which
    /// would skip the middleware; a route the transform leaves alone keeps it.
    func testWrappingAHandlerDropsItsImmediateAnswer() async {
        var b = RouterBuilder()
        b.get("/wrapped", immediate: { _ in .text("immediate") }) { _ in .text("async") }
        b.get("/kept", immediate: { _ in .text("immediate") }) { _ in .text("async") }
        b.wrapHandlers { _, pattern, handler in
            guard pattern == "/wrapped" else { return nil }
            return { request in
                var r = try await handler(request)
                r.headers.add("X-Wrapped", "1")
                return r
            }
        }
        let r = b.freeze()
        XCTAssertNil(r.respondImmediately(to: HTTPRequest(method: .GET, target: "/wrapped")))
        let wrapped = await r.respond(to: HTTPRequest(method: .GET, target: "/wrapped"))
        XCTAssertEqual(wrapped.headers["X-Wrapped"], "1")
        XCTAssertEqual(r.respondImmediately(to: HTTPRequest(method: .GET, target: "/kept")).map(body), "immediate")
    }

    func testNotFoundAndMethodNotAllowed() async throws {
        let r = makeRouter()
        var resp = await r.respond(to: HTTPRequest(method: .GET, target: "/nope"))
        XCTAssertEqual(resp.status, 404)
        let json = try JSONValue.parse(resp.body)
        XCTAssertEqual(json["error"]?["code"]?.stringValue, "NOT_FOUND")
        resp = await r.respond(to: HTTPRequest(method: .PUT, target: "/api/rooms/x"))
        XCTAssertEqual(resp.status, 405)
        XCTAssertEqual(resp.headers["Allow"], "GET, PATCH, HEAD")
        XCTAssertEqual(try JSONValue.parse(resp.body)["error"]?["code"]?.stringValue, "METHOD_NOT_ALLOWED")
        resp = await r.respond(to: HTTPRequest(method: .GET, target: "/api/rooms//elements"))
        XCTAssertEqual(resp.status, 404, "empty parameter segment does not match")
    }

    /// The most specific matching pattern owns the path for every method: `/api/rooms/my-rooms`
    /// is not also `/api/rooms/:roomId` for PATCH (else OPTIONS would list PATCH).
    func testLiteralRouteShadowsParameterRouteForOtherMethods() async {
        let r = makeRouter()
        for method: HTTPMethod in [.PATCH, .OPTIONS, .DELETE] {
            let resp = await r.respond(to: HTTPRequest(method: method, target: "/api/rooms/my-rooms"))
            XCTAssertEqual(resp.status, 405, "\(method)")
            XCTAssertEqual(resp.headers["Allow"], "GET, HEAD", "\(method)")
        }
        let patched = await r.respond(to: HTTPRequest(method: .PATCH, target: "/api/rooms/other"))
        XCTAssertEqual(body(patched), "patched")
    }

    func testHeadFallsBackToGet() async {
        let resp = await makeRouter().respond(to: HTTPRequest(method: .HEAD, target: "/api/rooms/my-rooms"))
        XCTAssertEqual(resp.status, 200)
        XCTAssertEqual(body(resp), "mine") // the server drops the body, keeping Content-Length
    }

    func testErrorsRender() async throws {
        let r = makeRouter()
        var resp = await r.respond(to: HTTPRequest(method: .GET, target: "/boom", requestID: "rid"))
        XCTAssertEqual(resp.status, 500)
        XCTAssertEqual(body(resp), #"{"error":{"code":"INTERNAL","message":"Internal server error"}}"#)
        resp = await r.respond(to: HTTPRequest(method: .GET, target: "/typed"))
        XCTAssertEqual(resp.status, 409)
        XCTAssertEqual(body(resp), #"{"error":{"code":"CONFLICT","message":"taken"}}"#)
    }

    func testQueryItems() {
        let req = HTTPRequest(method: .GET, target: "/p?a=1&b=x%2Fy&a=2&c=hello+world&d")
        XCTAssertEqual(req.path, "/p")
        XCTAssertEqual(req.query, "a=1&b=x%2Fy&a=2&c=hello+world&d")
        XCTAssertEqual(req.queryItems, ["a": "1", "b": "x/y", "c": "hello world", "d": ""])
        let abs = HTTPRequest(method: .GET, target: "http://example.com/x/y?z=1")
        XCTAssertEqual(abs.path, "/x/y")
        XCTAssertEqual(abs.queryItems["z"], "1")
    }

    func testJSONBodyHelpers() throws {
        func req(_ body: String, _ ct: String?) -> HTTPRequest {
            var h = HTTPHeaders()
            if let ct { h.add("Content-Type", ct) }
            return HTTPRequest(method: .POST, target: "/", headers: h, body: Array(body.utf8))
        }
        XCTAssertEqual(try req(#"{"a":1}"#, "application/json; charset=utf-8").requestJSONObject()["a"], .int(1))
        XCTAssertEqual(try req(#"{"a":1}"#, nil).requestJSONObject()["a"], .int(1))
        func status(_ r: HTTPRequest) -> (Int, String)? {
            do { _ = try r.requestJSONObject(); return nil } catch let e as HTTPError { return (e.status, e.code) } catch { return (0, "") }
        }
        XCTAssertEqual(status(req(#"{"a":1}"#, "text/plain"))?.0, 415)
        XCTAssertEqual(status(req(#"{"a":1}"#, "text/plain"))?.1, "UNSUPPORTED_MEDIA_TYPE")
        XCTAssertEqual(status(req("", "application/json"))?.1, "VALIDATION_ERROR")
        XCTAssertEqual(status(req("{nope", "application/json"))?.0, 400)
        XCTAssertEqual(status(req("[1]", "application/json"))?.0, 400)
    }

    func testHeaders() {
        var h: HTTPHeaders = ["Content-Type": "a", "X-Multi": "1"]
        h.add("x-multi", "2")
        XCTAssertEqual(h["content-type"], "a")
        XCTAssertEqual(h.values(for: "X-MULTI"), ["1", "2"])
        h.replaceOrAdd("X-Multi", "3")
        XCTAssertEqual(h.values(for: "x-multi"), ["3"])
        h.remove("CONTENT-TYPE")
        XCTAssertNil(h["Content-Type"])
        XCTAssertEqual(h.count, 1)
        h.add("HOST", "x")
        h.add("host", "y")
        XCTAssertEqual(h.count(of: "Host"), 2)
        XCTAssertEqual(h.count(of: "Hos"), 0, "a prefix is another name")
    }

    /// Names match ignoring ASCII case only: a prefix, a longer name, or a non-ASCII letter
    /// that folds to the same ASCII one are other names.
    func testASCIICaseInsensitiveEquals() {
        for (a, b, equal) in [("Content-Length", "content-length", true), ("X-Request-Id", "X-REQUEST-ID", true), ("", "", true),
                              ("Host", "Hos", false), ("Host", "Hosts", false), ("", "a", false), ("a", "", false),
                              ("Stra\u{DF}e", "STRA\u{DF}E", true), ("Stra\u{DF}e", "STRASSE", false), ("\u{C9}", "\u{E9}", false),
                              ("K", "\u{212A}", false), ("[", "{", false)] {
            XCTAssertEqual(asciiCaseInsensitiveEquals(a, b), equal, "\(a) \(b)")
            XCTAssertEqual(asciiCaseInsensitiveEquals(b, a), equal, "\(b) \(a)")
        }
    }

    /// The hash lookup of all-literal paths resolves every path and method exactly as trying
    /// each route in order does: same pattern, parameters, 404 or 405 with the same `Allow`.
    /// Empty segments (`//`), trailing slashes, the root and non-ASCII paths included.
    func testLiteralLookupAgreesWithTheScan() {
        var b = RouterBuilder()
        let ok: HTTPHandler = { _ in .text("") }
        for (method, pattern) in [(HTTPMethod.GET, "/"), (.GET, "/health"), (.POST, "/health"), (.GET, "/api/rooms/my-rooms"),
                                  (.GET, "/api/rooms/:roomId"), (.PATCH, "/api/rooms/:roomId"), (.DELETE, "/api/auth/me"),
                                  (.GET, "/api/auth/me"), (.GET, "/a//b"), (.GET, "/a/b"), (.GET, "/socket.io/*"),
                                  (.HEAD, "/only-head"), (.GET, "/caf\u{E9}"), (.GET, "/:x/:y")] {
            b.add(method, pattern, ok)
        }
        let router = b.freeze()
        func summary(_ r: Router.Resolution) -> String {
            switch r {
            case .matched(_, let p, let pattern): return "\(pattern) \(p.pairs.map { "\($0.name)=\($0.value)" })"
            case .notFound: return "404"
            case .methodNotAllowed(let allow): return "405 \(allow)"
            }
        }
        let fixed = ["", "/", "//", "///", "/health", "/health/", "//health", "/health//", "/api/rooms/my-rooms", "/api/rooms/my-rooms/",
                     "/api/rooms/r1", "/api/auth/me", "/a/b", "/a//b", "/a/b/", "/socket.io", "/socket.io/x", "/only-head",
                     "/caf\u{E9}", "/cafe\u{301}", "/x/y", "/x//y", "/nope", "health"]
        let alphabet = ["a", "b", "/", "health", "api", "auth", "me", "rooms", "my-rooms", "socket.io", "\u{E9}"]
        let random = (0..<2000).map { _ in (0..<Int.random(in: 0...6)).map { _ in alphabet.randomElement()! }.joined() }
        for path in fixed + random {
            for method: HTTPMethod in [.GET, .HEAD, .POST, .PATCH, .DELETE, .OPTIONS] {
                XCTAssertEqual(summary(router.resolve(method: method, path: path)), summary(router.resolveByScan(method: method, path: path)),
                               "\(method) \(path)")
            }
        }
        XCTAssertNotNil(router.literalRoutes["api/auth/me"], "all-literal patterns are indexed")
        XCTAssertNil(router.literalRoutes["a//b"], "a pattern with an empty segment is left to the scan")
    }

    /// The byte split of an ASCII path (`Router.segments`) gives the segments the `Character`
    /// split gives, for every path; non-ASCII paths take the `Character` split.
    func testByteSplitMatchesTheCharacterSplit() {
        let fixed = ["", "/", "//", "/a", "/a/", "a/b", "/a//c", "/socket.io/?EIO=4", "/a/%2F/c", "/a/\u{E9}", "/a/\u{301}b/c",
                     "/a/b/\u{301}", "/s/\u{1F600}/x"]
        let alphabet = ["a", "/", "%", "-", "\u{301}", "\u{E9}", ".", "~", "?"]
        let random = (0..<3000).map { _ in (0..<Int.random(in: 0...12)).map { _ in alphabet.randomElement()! }.joined() }
        for path in fixed + random {
            XCTAssertEqual(Router.segments(path), Router.characterSegments(path), path)
        }
        XCTAssertEqual(Router.segments("/api/rooms/r1/elements/e1"), ["", "api", "rooms", "r1", "elements", "e1"])
    }
}
