import TSEngineIO

/// libFuzzer target: the Engine.IO v4 packet codec — one text packet (WebSocket frame), a polling
/// payload (packets joined by 0x1E, binary as `b<base64>`). Oracle beyond "no crash": a decoded
/// payload re-encodes to one that decodes to as many packets.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEngineIO(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? EnginePacketCodec.decodeText(bytes[...])
    _ = try? EnginePacketCodec.decodeText(bytes[...], allowBase64Binary: true)
    _ = try? EnginePacketCodec.decodeText(String(decoding: bytes, as: UTF8.self))
    if let packets = try? EnginePacketCodec.decodePayload(bytes) {
        let encoded = EnginePacketCodec.encodePayload(packets)
        guard let again = try? EnginePacketCodec.decodePayload(encoded), again.count == packets.count else {
            fatalError("re-encoded payload does not decode to \(packets.count) packets")
        }
    }
    return 0
}
