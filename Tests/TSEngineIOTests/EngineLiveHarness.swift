import Logging
import TSHTTP
import TSJSON
import TSSockets
import TSTestSupport
import XCTest
@testable import TSEngineIO

/// A live Engine.IO echo server at `/engine.io/` (pingInterval 300 ms, pingTimeout 200 ms, as
/// the official suite's server) on port 0, with raw-client helpers.
// @unchecked Sendable: set up once in `start`, then only read.
final class EngineLiveHarness: @unchecked Sendable {
    var http: HTTPServer?
    var engine: EngineIOServer?
    var recorder = EchoRecorder()
    var port = 0

    /// Starts the server; `maxBodyBytes` bounds a POST body (the HTTP server's default when nil).
    func start(maxBodyBytes: Int? = nil, _ configure: (inout EngineIOConfiguration) -> Void = { _ in }) throws {
        var config = EngineIOConfiguration(pingInterval: .milliseconds(300), pingTimeout: .milliseconds(200))
        config.path = "/engine.io/"
        configure(&config)
        let engine = try EngineIOServer(configuration: config, logger: Logger(label: "test"))
        engine.delegate = recorder
        var b = RouterBuilder()
        engine.mount(on: &b)
        var httpConfig = HTTPServerConfiguration(host: "127.0.0.1", port: 0, eventLoops: 2)
        if let maxBodyBytes { httpConfig.maxBodyBytes = maxBodyBytes }
        let http = HTTPServer(configuration: httpConfig, responder: b.freeze(), logger: Logger(label: "test"))
        port = try http.start()
        self.engine = engine
        self.http = http
    }

    func stop() {
        engine?.closeAll()
        let h = http
        TestFuture.awaitTask(timeout: 15) { await h?.shutdown() }
    }

    func get(_ q: String) -> RawHTTP.Response { RawHTTP.request(port: port, "GET", "/engine.io/?\(q)") }
    func post(_ q: String, _ body: String) -> RawHTTP.Response {
        RawHTTP.request(port: port, "POST", "/engine.io/?\(q)", body: Array(body.utf8))
    }

    /// A GET poll for `sid` on another thread, returned once the server has parked it (the
    /// session holds it, waiting for packets).
    func pollInBackground(_ sid: String) -> TestFuture<RawHTTP.Response> {
        let p = port
        let poll = TestFuture.run { RawHTTP.request(port: p, "GET", "/engine.io/?EIO=4&transport=polling&sid=\(sid)") }
        let session = engine?.session(id: sid)
        XCTAssertTrue(blockUntil { session?.hasParkedPoll ?? true }, "the GET reached the server and was parked")
        return poll
    }

    func openPolling() throws -> String {
        let r = get("EIO=4&transport=polling")
        XCTAssertEqual(r.status, 200)
        let open = try JSONValue.parse(Array(r.body.dropFirst()))
        return try XCTUnwrap(open["sid"]?.stringValue)
    }
}
