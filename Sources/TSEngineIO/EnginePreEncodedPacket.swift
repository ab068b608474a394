/// A packet encoded once for many recipients (broadcast): the text of the Engine.IO packet
/// (for polling queues) and the WebSocket frame carrying it (for websocket sessions).
public struct EnginePreEncodedPacket: Sendable {
    /// The packet as a polling payload segment (type digit + data, or `b` + base64).
    public let segment: [UInt8]
    /// The complete WebSocket frame (text frame for text packets, binary frame for binary).
    public let frame: [UInt8]

    public init(_ packet: EnginePacket) {
        var seg: [UInt8] = []
        EnginePacketCodec.encodeText(packet, into: &seg)
        segment = seg
        switch packet.data {
        case .text(let s):
            var bytes: [UInt8] = [packet.type.wireByte]
            bytes.append(contentsOf: s.utf8)
            frame = EngineWebSocketFraming.textFrame(bytes)
        case .binary(let b):
            frame = EngineWebSocketFraming.binaryFrame(b)
        }
    }

    /// A `message` packet whose data is already UTF-8 bytes (avoids a String round trip).
    public init(messageUTF8 data: [UInt8]) {
        var seg: [UInt8] = [EnginePacketType.message.wireByte]
        seg.append(contentsOf: data)
        segment = seg
        frame = EngineWebSocketFraming.textFrame(seg)
    }
}
