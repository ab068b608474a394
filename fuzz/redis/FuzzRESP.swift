import TSRedis

/// libFuzzer target: the RESP2 reply decoder (TSRedis). Oracles beyond "no crash": (1) chunking
/// does not matter — the input fed at once and fed in two pieces split at a point chosen by the
/// input give the same values (or both fail); (2) every decoded value re-encodes to bytes that
/// decode to the same value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRESP(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let limits = RESPDecoder.Limits(maxBulkBytes: 4096, maxArrayCount: 64, maxDepth: 4, maxLineBytes: 256, maxValueBytes: 16384)
    var whole = RESPDecoder(limits: limits)
    let all = try? whole.feed(bytes)
    let split = size == 0 ? 0 : Int(bytes[0]) % (size + 1)
    var pieces = RESPDecoder(limits: limits)
    var chunked: [RESPValue]? = []
    do {
        chunked! += try pieces.feed(Array(bytes[..<split]))
        chunked! += try pieces.feed(Array(bytes[split...]))
    } catch { chunked = nil }
    if let all, let chunked, all != chunked { fatalError("chunking changed the decoded values") }
    if (all == nil) != (chunked == nil) {
        // A failure must be found whatever the chunking; only values decoded before it may differ in count.
        fatalError("a failure depends on chunking")
    }
    for value in all ?? [] {
        var again = RESPDecoder(limits: RESPDecoder.Limits())
        guard let back = try? again.feed(RESPEncoder.encode(value)), back == [value] else {
            fatalError("a decoded value does not survive re-encoding: \(value)")
        }
    }
    return 0
}
