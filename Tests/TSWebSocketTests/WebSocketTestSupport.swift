import XCTest
@testable import TSWebSocket

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

/// Runs bytes through decoder + state machine exactly as `WebSocketConnection` does: every
/// decoded frame goes to the machine; a decoder error becomes `decodingFailed`. Feeding stops
/// after the first action that ends the connection.
struct Pipeline {
    var decoder: WebSocketFrameDecoder
    var machine: WebSocketStateMachine

    init(maxFrameSize: Int = 1_048_576, maxMessageSize: Int = 1_048_576) {
        decoder = WebSocketFrameDecoder(maxFrameSize: maxFrameSize)
        machine = WebSocketStateMachine(maxMessageSize: maxMessageSize)
    }

    mutating func feed(_ bytes: [UInt8], chunk: Int = Int.max) -> [WebSocketStateMachine.Action] {
        var actions: [WebSocketStateMachine.Action] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + chunk)
            decoder.append(Array(bytes[offset..<end]))
            offset = end
            while true {
                let action: WebSocketStateMachine.Action
                do {
                    if let frame = try decoder.nextFrame() {
                        action = machine.receive(frame)
                    } else {
                        guard let header = try decoder.partialFrameHeader(),
                              let from = machine.partialPayloadOffset(for: header) else { break }
                        action = machine.receivePartialPayload(decoder.partialPayload(header, from: from), of: header)
                        if action != .none { actions.append(action) }
                        break
                    }
                } catch {
                    action = machine.decodingFailed(error)
                }
                if action != .none { actions.append(action) }
                if machine.state == .closed { return actions }
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
