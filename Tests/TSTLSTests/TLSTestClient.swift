#if canImport(CTLS)
import CTLS
import TSTLS
import XCTest

/// A verifying TLS client context from the same shim (what curl/URLSession would do): trusts
/// only `caFile`, checks the peer (SSL_VERIFY_PEER), offers ALPN http/1.1.
func makeClientContext(caFile: String, maxVersion: Int32? = nil) -> OpaquePointer {
    let ctx = SSL_CTX_new(TLS_client_method())!
    XCTAssertEqual(SSL_CTX_load_verify_locations(ctx, caFile, nil), 1)
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nil)
    let alpn: [UInt8] = [8] + Array("http/1.1".utf8)
    XCTAssertEqual(SSL_CTX_set_alpn_protos(ctx, alpn, UInt32(alpn.count)), 0)  // 0 = success for this one
    if let maxVersion { _ = ts_ssl_ctx_set_max_proto_version(ctx, maxVersion) }
    return ctx
}

/// What a pair of engines produced while pumping bytes between them.
struct PumpResult {
    var clientPlaintext: [UInt8] = []
    var serverPlaintext: [UInt8] = []
    var clientEvents: [TLSEngineAction] = []
    var serverEvents: [TLSEngineAction] = []
}

/// Carries `.send` bytes between a client and a server engine until neither has more to say.
/// `chunk`: feed the server at most this many bytes per `receive` (1 = trickle byte by byte).
func pump(client: TLSConnectionEngine, server: TLSConnectionEngine, clientFirst: [TLSEngineAction],
          serverFirst: [TLSEngineAction] = [], chunk: Int = .max, into result: inout PumpResult) {
    var toServer: [UInt8] = []
    var toClient: [UInt8] = []
    func absorb(_ actions: [TLSEngineAction], fromClient: Bool) {
        for a in actions {
            switch a {
            case .send(let b): if fromClient { toServer += b } else { toClient += b }
            case .deliver(let b): if fromClient { result.clientPlaintext += b } else { result.serverPlaintext += b }
            default: if fromClient { result.clientEvents.append(a) } else { result.serverEvents.append(a) }
            }
        }
    }
    absorb(clientFirst, fromClient: true)
    absorb(serverFirst, fromClient: false)
    var rounds = 0
    while (!toServer.isEmpty || !toClient.isEmpty) && rounds < 100_000 {
        rounds += 1
        if !toServer.isEmpty {
            let n = min(chunk, toServer.count)
            let piece = Array(toServer.prefix(n))
            toServer.removeFirst(n)
            absorb(server.receive(piece), fromClient: false)
        }
        if !toClient.isEmpty {
            let piece = toClient
            toClient = []
            absorb(client.receive(piece), fromClient: true)
        }
    }
}
#endif
