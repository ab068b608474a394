import TSWebSocket

/// libFuzzer target: the WebSocket frame decoder (RFC 6455 §5.2) and the connection state machine
/// over the decoded frames. Oracle beyond "no crash": the decoder gives the same frames whether
/// the bytes arrive at once or split at a point chosen by the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocket(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let whole = frames(feeding: [bytes[...]])
    if !bytes.isEmpty {
        let cut = Int(bytes[0]) % (bytes.count + 1)
        let split = frames(feeding: [bytes[..<cut], bytes[cut...]])
        if whole != split { fatalError("split at \(cut) changed the frames") }
    }
    return 0
}

private func frames(feeding pieces: [ArraySlice<UInt8>]) -> [String] {
    var decoder = WebSocketFrameDecoder(maxFrameSize: 4096)
    var out: [String] = []
    for piece in pieces {
        decoder.append(Array(piece))
        _ = try? decoder.partialFrameHeader()
        while true {
            do {
                guard let frame = try decoder.nextFrame() else { break }
                out.append("\(frame.fin) \(frame.rsv) \(frame.opcode) \(frame.payload.count) \(frame.payload.prefix(16))")
            } catch {
                out.append("error \(error)")
                return out
            }
        }
    }
    return out
}
