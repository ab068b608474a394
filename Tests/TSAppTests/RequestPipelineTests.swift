import Foundation
@testable import TSHTTP
import TSJSON
@testable import TSRoutes
import XCTest

/// The request pipeline's composition (RequestPipeline): steps run outermost first, each sees
/// what the steps before it put into the context, an absent step passes the request on, and no
/// task-local storage carries request state anywhere in the server's sources.
final class RequestPipelineTests: XCTestCase {
    /// Appends its name to the request's `X-Trace` header on the way in, and answers itself when
    /// it is `stop`.
    struct Trace: RouteMiddleware {
        let name: String
        var stop = false

        func handle(_ context: inout RequestContext, next: (inout RequestContext) async throws -> HTTPResponse) async throws -> HTTPResponse {
            let trace = (context.request.header("X-Trace") ?? "") + name
            context.request.headers.replaceOrAdd(name: "X-Trace", value: trace)
            if stop { return .text("stopped at \(trace)", status: 403) }
            return try await next(&context)
        }
    }

    /// A step around the router for `/api/` requests only, tracing itself as "r".
    struct OnlyAPI: RouteMiddleware {
        func applies(to request: HTTPRequest) -> Bool { request.path.hasPrefix("/api/") }
        func handle(_ context: inout RequestContext, next: (inout RequestContext) async throws -> HTTPResponse) async throws -> HTTPResponse {
            try await Trace(name: "r").handle(&context, next: next)
        }
    }

    func run<M: RouteMiddleware>(_ chain: M) async throws -> (HTTPResponse, String?) {
        var context = RequestContext(request: HTTPRequest(method: .GET, target: "/api/x"))
        var seen: String?
        let response = try await chain.handle(&context) { context in
            seen = context.request.header("X-Trace")
            return .text("handled")
        }
        return (response, seen)
    }

    func testStepsRunOutermostFirstAndAnAbsentStepPassesTheRequestOn() async throws {
        let absent: Trace? = nil
        let (response, seen) = try await run(MiddlewarePair(Trace(name: "a"), MiddlewarePair(absent, Trace(name: "b"))))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(seen, "ab")
    }

    func testAStepThatAnswersStopsTheChain() async throws {
        let (response, seen) = try await run(MiddlewarePair(Trace(name: "a"), MiddlewarePair(Trace(name: "b", stop: true), Trace(name: "c"))))
        XCTAssertEqual(response.status, 403)
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "stopped at ab")
        XCTAssertNil(seen)
    }

    /// Around the router, a step that does not apply to a request is not run for it: the router
    /// gets the request as it came (no trace added), while a request it applies to passes through it.
    func testAStepAroundTheRouterIsSkippedForRequestsItDoesNotApplyTo() async throws {
        struct Echo: HTTPResponder {
            func respond(to request: HTTPRequest) async -> HTTPResponse { .text(request.header("X-Trace") ?? "none") }
        }
        let responder = MiddlewareResponder(OnlyAPI(), around: Echo())
        let skipped = await responder.respond(to: HTTPRequest(method: .GET, target: "/health"))
        XCTAssertEqual(String(decoding: skipped.body, as: UTF8.self), "none")
        let passed = await responder.respond(to: HTTPRequest(method: .GET, target: "/api/x"))
        XCTAssertEqual(String(decoding: passed.body, as: UTF8.self), "r")
        XCTAssertTrue(Trace(name: "t").applies(to: HTTPRequest(method: .GET, target: "/health")), "a step applies to every request unless it says otherwise")
    }

    /// An immediate answer passes a step around the router only where the step does not apply:
    /// where it applies, the immediate path gives nothing and the request takes the async path
    /// through the step. A route behind a chain (RequestPipeline.install) loses its immediate answer.
    func testImmediateAnswersSkipNoStepThatApplies() async throws {
        var b = RouterBuilder()
        b.get("/health", immediate: { _ in .text("immediate") }) { _ in .text("async") }
        b.get("/api/x", immediate: { _ in .text("immediate") }) { req in .text("async " + (req.header("X-Trace") ?? "none")) }
        let responder = MiddlewareResponder(OnlyAPI(), around: b.freeze())
        let health = responder.respondImmediately(to: HTTPRequest(method: .GET, target: "/health"))
        XCTAssertEqual(health.map { String(decoding: $0.body, as: UTF8.self) }, "immediate")
        XCTAssertNil(responder.respondImmediately(to: HTTPRequest(method: .GET, target: "/api/x")), "the step applies: no immediate answer")
        let api = await responder.respond(to: HTTPRequest(method: .GET, target: "/api/x"))
        XCTAssertEqual(String(decoding: api.body, as: UTF8.self), "async r")

        // Behind the pipeline: /api/test/events gets its chain (test-mode access: a token is
        // configured and the request has none), /health keeps its immediate answer.
        let live = try LiveServer()
        var routes = RouterBuilder()
        routes.get("/health", immediate: { _ in .text("immediate") }) { _ in .text("async") }
        routes.get("/api/test/events", immediate: { _ in .text("immediate") }) { _ in .text("async") }
        RequestPipeline(authenticator: Authenticator(auth: live.server.domain.auth), testAccess: TestModeAccess(token: "secret"))
            .install(into: &routes, mounted: RouteTable())
        let router = routes.freeze()
        XCTAssertNotNil(router.respondImmediately(to: HTTPRequest(method: .GET, target: "/health")))
        XCTAssertNil(router.respondImmediately(to: HTTPRequest(method: .GET, target: "/api/test/events")),
                     "a route behind a chain answers through it, never around it")
        let events = await router.respond(to: HTTPRequest(method: .GET, target: "/api/test/events"))
        XCTAssertNotEqual(String(decoding: events.body, as: UTF8.self), "immediate")
        XCTAssertEqual(events.status, 401, "the chain's test-mode access check ran: no token")
        await live.stop()
    }

    /// Validation puts the body it parsed into the context: the handler reads it without parsing.
    func testValidationHandsTheParsedBodyToTheHandlerInTheContext() async throws {
        let live = try LiveServer()
        let pipeline = RequestPipeline(authenticator: Authenticator(auth: live.server.domain.auth))
        let chain = try XCTUnwrap(pipeline.chain(.POST, "/api/auth/login"))
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        var context = RequestContext(request: HTTPRequest(method: .POST, target: "/api/auth/login", headers: headers,
                                                          body: Array(#"{"username":"ann","password":"ann-password"}"#.utf8)))
        var body: JSONValue?
        _ = try await chain.handle(&context) { context in
            if case .tree(let tree) = context.body { body = tree }
            return .text("handled")
        }
        XCTAssertEqual(body?["username"], "ann")
        XCTAssertNil(pipeline.chain(.GET, "/health"), "a route with nothing to check keeps its handler as registered")
        await live.stop()
    }

    /// The server as it is composed (the inspector's recorder around the router, the pipeline's
    /// chains on the API routes): `/health` is answered without a task once the database's health
    /// is known, an API route never is, and both still answer over the socket.
    func testTheComposedServerAnswersHealthImmediatelyAndNoAPIRoute() async throws {
        let live = try LiveServer()
        let responder = live.server.http.context.responder
        let api = APIClient(base: live.base)
        let first = try await api.get("/health")
        XCTAssertEqual(first.status, 200)
        let health = try XCTUnwrap(responder.respondImmediately(to: HTTPRequest(method: .GET, target: "/health")),
                                   "the ping of the first /health makes the database's health known")
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(try JSONValue.parse(health.body)["database"], "ok")
        XCTAssertNil(responder.respondImmediately(to: HTTPRequest(method: .GET, target: "/api/auth/me")))
        XCTAssertNil(responder.respondImmediately(to: HTTPRequest(method: .GET, target: "/api/rooms/my-rooms")))
        let again = try await api.get("/health")
        XCTAssertEqual(again.status, 200)
        XCTAssertEqual(try JSONValue.parse(Array(again.body))["status"], "ok")
        let me = try await api.get("/api/auth/me")
        XCTAssertEqual(me.status, 401, "the API route's chain ran")
        await live.stop()
    }

    func testNoTaskLocalInTheSources() throws {
        let sources = APIReferenceTests.root.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL }
            .filter { $0.pathExtension == "swift" } ?? []
        XCTAssertGreaterThan(files.count, 100)
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            XCTAssertFalse(text.contains("@" + "TaskLocal"), "\(file.path): request state travels in RequestContext, not in a task-local")
        }
    }
}
