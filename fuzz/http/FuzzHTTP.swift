import TSHTTP

/// libFuzzer target: the HTTP/1.1 request parser (RFC 9112) with small limits, and the Host
/// grammar (RFC 3986 authority). Oracle beyond "no crash": the events do not depend on how the
/// bytes are split — all at once, and split at a point chosen by the input, give the same requests
/// (method, target, body) and the same error status.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = HTTPParser.isValidHost(bytes)
    let whole = summary(feeding: [bytes[...]])
    if !bytes.isEmpty {
        let cut = Int(bytes[0]) % (bytes.count + 1)
        let split = summary(feeding: [bytes[..<cut], bytes[cut...]])
        if whole != split { fatalError("split at \(cut) changed the result: \(whole) vs \(split)") }
    }
    return 0
}

private let limits = HTTPParserLimits(maxRequestLineBytes: 256, maxHeaderBytes: 1024, maxHeaderCount: 16,
                                      maxBodyBytes: 4096, maxChunkLineBytes: 64)

/// Requests and the error status the parser produced, in order.
private func summary(feeding pieces: [ArraySlice<UInt8>]) -> [String] {
    var parser = HTTPParser(limits: limits)
    var out: [String] = []
    for piece in pieces {
        parser.feed(Array(piece))
        var guardCount = 0
        while let event = parser.next() {
            guardCount += 1
            if guardCount > 10_000 { fatalError("parser produced events without consuming input") }
            switch event {
            case .expectContinue: break  // emitted once per request head; not split-dependent, but skipped
            case .request(let head, let body, _): out.append("\(head.method.rawValue) \(head.target) \(body.count) \(head.keepAlive)")
            case .error(let e): out.append("error \(e.status)")
            }
        }
    }
    return out
}
