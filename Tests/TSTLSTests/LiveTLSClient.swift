#if canImport(CTLS)
import CTLS
import TSTLS
import TSTestSupport
import XCTest

/// A verifying TLS client over a real socket (RawTCPClient + a client `TLSConnectionEngine`).
final class LiveTLSClient {
    let tcp: RawTCPClient
    let engine: TLSConnectionEngine
    private(set) var plaintext: [UInt8] = []
    private(set) var events: [TLSEngineAction] = []
    private(set) var closed = false

    init(port: Int, caFile: String) throws {
        tcp = try RawTCPClient(port: port, timeoutSeconds: 5)
        let cctx = makeClientContext(caFile: caFile)
        defer { SSL_CTX_free(cctx) }
        engine = try TLSConnectionEngine(clientContext: cctx, serverName: "localhost")
    }

    func handshake() -> Bool {
        apply(engine.start())
        while !engine.isHandshakeComplete && !engine.isFinished && !closed { readOnce() }
        return engine.isHandshakeComplete
    }

    func send(_ text: String) { apply(engine.encrypt(Array(text.utf8))) }

    /// Reads until one complete HTTP response is in `plaintext` (or close/timeout).
    func readResponse(from offset: Int = 0) -> RawHTTP.Response? {
        while true {
            if let (response, complete) = RawHTTP.parse(Array(plaintext[offset...])), complete { return response }
            if closed || engine.isFinished { return nil }
            readOnce()
        }
    }

    private func readOnce() {
        switch tcp.read() {
        case .bytes(let b): apply(engine.receive(b))
        default: closed = true
        }
    }

    private func apply(_ actions: [TLSEngineAction]) {
        for a in actions {
            switch a {
            case .send(let b): tcp.write(b)
            case .deliver(let b): plaintext += b
            default: events.append(a)
            }
        }
    }
}
#endif
