// RFC 6455 §5 (framing) feeding §6.2 (receiving data), §5.6 + §8.1 (fail fast on invalid UTF-8).

/// The receive path of a connection without the I/O: bytes go through `WebSocketFrameDecoder`,
/// every decoded frame goes to `WebSocketStateMachine`, a decoding error becomes
/// `decodingFailed`, and an incomplete text frame's payload prefix is shown to the machine early
/// so invalid UTF-8 fails before the frame has fully arrived. `WebSocketConnection` runs it and
/// performs the actions; tests feed it bytes directly.
struct WebSocketInbound {
    var decoder: WebSocketFrameDecoder
    var machine: WebSocketStateMachine
    /// Set once the buffered bytes have been fully examined; cleared by `append`.
    private var needsBytes = false
    /// Complete frames decoded so far (lets the connection tell a new frame from a trickled one).
    private(set) var framesDecoded = 0

    init(decoder: WebSocketFrameDecoder, machine: WebSocketStateMachine) {
        self.decoder = decoder
        self.machine = machine
    }

    init(configuration: WebSocketConfiguration) {
        self.init(decoder: WebSocketFrameDecoder(maxFrameSize: configuration.maxFrameSize),
                  machine: WebSocketStateMachine(configuration: configuration))
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        decoder.append(bytes)
        needsBytes = false
    }

    mutating func append(_ bytes: [UInt8]) {
        decoder.append(bytes)
        needsBytes = false
    }

    /// The next action to perform (possibly `.none`), or nil when more bytes are needed or the
    /// machine has closed. Perform each action before asking for the next.
    mutating func nextAction() -> WebSocketStateMachine.Action? {
        guard !needsBytes, machine.state != .closed else { return nil }
        do {
            if let frame = try decoder.nextFrame() {
                framesDecoded &+= 1
                return machine.receive(frame)
            }
            needsBytes = true
            guard let header = try decoder.partialFrameHeader(),
                  let offset = machine.partialPayloadOffset(for: header) else { return nil }
            return machine.receivePartialPayload(decoder.partialPayload(header, from: offset), of: header)
        } catch {
            return machine.decodingFailed(error)
        }
    }
}
