import TSTestSupport
import XCTest
@testable import TSWebSocket

/// The shared raw client (its own frame codec, independent of this module's), speaking this
/// module's frame types.
extension RawWebSocketClient {
    struct MaskedServerFrame: Error {}

    func sendFrame(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0, masked: Bool = true) {
        sendFrame(opcode: opcode.rawValue, payload, fin: fin, rsv: rsv, masked: masked)
    }

    /// The next frame from the server, or nil on EOF/timeout; throws if the server masked it (§5.1).
    func readFrame() throws -> WebSocketFrame? {
        guard let f = nextFrame() else { return nil }
        guard f.maskingKey == nil else { throw MaskedServerFrame() }
        return WebSocketFrame(fin: f.fin, rsv: f.rsv, opcode: WebSocketOpcode(rawValue: f.opcode), payload: f.payload)
    }
}

/// The masking key of RFC 6455 §5.7's examples.
let rfcKey: (UInt8, UInt8, UInt8, UInt8) = (0x37, 0xFA, 0x21, 0x3D)

/// A client-to-server frame (masked unless told otherwise).
func clientFrame(
    _ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0, masked: Bool = true
) -> [UInt8] {
    WebSocketFrameEncoder.encode(opcode: opcode, payload: payload, fin: fin, rsv: rsv, maskingKey: masked ? rfcKey : nil)
}

func clientFrame(_ opcode: WebSocketOpcode, _ text: String, fin: Bool = true) -> [UInt8] {
    clientFrame(opcode, Array(text.utf8), fin: fin)
}

func closePayload(_ code: UInt16, _ reason: [UInt8] = []) -> [UInt8] {
    [UInt8(code >> 8), UInt8(code & 0xFF)] + reason
}

/// Feeds bytes, `chunk` at a time, through the connection's own receive path
/// (`WebSocketInbound`) and collects the actions other than `.none`. Feeding stops after the
/// first action that ends the connection.
struct Pipeline {
    var inbound: WebSocketInbound
    var machine: WebSocketStateMachine { inbound.machine }

    init(maxFrameSize: Int = 1_048_576, maxMessageSize: Int = 1_048_576) {
        inbound = WebSocketInbound(decoder: WebSocketFrameDecoder(maxFrameSize: maxFrameSize),
                                   machine: WebSocketStateMachine(maxMessageSize: maxMessageSize))
    }

    mutating func feed(_ bytes: [UInt8], chunk: Int = Int.max) -> [WebSocketStateMachine.Action] {
        var actions: [WebSocketStateMachine.Action] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + chunk)
            inbound.append(Array(bytes[offset..<end]))
            offset = end
            while let action = inbound.nextAction() {
                if action != .none { actions.append(action) }
            }
            if machine.state == .closed { return actions }
        }
        return actions
    }
}

func runFrames(_ frames: [[UInt8]], maxFrameSize: Int = 1_048_576, maxMessageSize: Int = 1_048_576) -> [WebSocketStateMachine.Action] {
    var p = Pipeline(maxFrameSize: maxFrameSize, maxMessageSize: maxMessageSize)
    return p.feed(frames.flatMap { $0 })
}

func failure(_ code: UInt16) -> (WebSocketStateMachine.Action) -> Bool {
    { action in
        if case .sendCloseAndDisconnect(let c, _) = action { return c == code }
        return false
    }
}
