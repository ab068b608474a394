import TSJSON
import TSSocketIO

/// libFuzzer target: the Socket.IO v5 packet codec and the binary-attachment reassembler. The
/// first byte picks how the rest is fed; crash-only oracle (plus encoding whatever decodes).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSocketIO(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let mode = bytes.first else { return 0 }
    let rest = bytes.dropFirst()
    if let packet = try? SocketIOPacketCodec.decode(rest) {
        _ = SocketIOPacketCodec.encode(packet)
    }
    if mode & 1 == 1 {
        // Reassembler: split the rest at 0xFF bytes; even pieces as text, odd ones as binary.
        var r = SocketIOBinaryReassembler(maxAttachments: 4)
        for (i, piece) in rest.split(separator: 0xFF, omittingEmptySubsequences: false).enumerated() {
            do {
                if i % 2 == 0 {
                    _ = try r.receive(text: String(decoding: piece, as: UTF8.self))
                } else {
                    _ = try r.receive(binary: Array(piece))
                }
            } catch {
                break
            }
        }
    }
    return 0
}
