import TSJSON

/// libFuzzer target: the JSON parser (RFC 8259) at the HTTP layer's depth limit, both duplicate-key
/// modes. Oracle beyond "no crash": serialization is a fixed point — serialize(parse(serialize(v)))
/// == serialize(v) — so anything the parser accepts can be written and read back unchanged. And
/// the fast reader of interaction-state's body (`JSONPlainStringArray`) takes only what the full
/// parse reads as exactly that object, with the same strings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let fast = JSONPlainStringArray.read(bytes, member: Array("postIds".utf8), count: 0...50) {
        guard let full = try? JSONValue.parse(bytes, maxDepth: 64, rejectDuplicateKeys: true), full.objectValue?.count == 1,
              full["postIds"]?.arrayValue?.map({ $0.stringValue }) == fast.map({ Optional($0) }) else {
            fatalError("the fast reader took what the full parse reads otherwise: \(String(decoding: bytes, as: UTF8.self))")
        }
    }
    _ = try? JSONValue.parse(bytes, maxDepth: 64, rejectDuplicateKeys: true)
    guard let value = try? JSONValue.parse(bytes, maxDepth: 64) else { return 0 }
    let once = value.serialized()
    guard let again = try? JSONValue.parse(once, maxDepth: 64) else {
        fatalError("serialized output does not parse: \(String(decoding: once, as: UTF8.self))")
    }
    let twice = again.serialized()
    if once != twice {
        fatalError("serialization is not a fixed point: \(String(decoding: once, as: UTF8.self)) vs \(String(decoding: twice, as: UTF8.self))")
    }
    return 0
}
