// RFC 6455 §5.4 (fragmentation), §5.5 (control frames), §5.6 (data frames), §7 (closing).

/// The server side of one WebSocket connection as a pure state machine: decoded frames and local
/// requests go in, action values come out. No I/O, no clocks — `WebSocketConnection` performs
/// the actions and owns the close timer.
public struct WebSocketStateMachine: Sendable {
    public enum State: Equatable, Sendable {
        /// Exchanging messages.
        case open
        /// We sent a Close frame and are waiting (up to `closeTimeout`) for the peer's (§7.1.2).
        case closing
        /// Close handshake done or connection failed; the TCP connection is (being) closed.
        case closed
    }

    /// What to do in response to a received frame or a decoding error.
    public enum Action: Equatable, Sendable {
        case none
        /// A complete message for the application.
        case deliver(WebSocketMessage)
        /// Answer a Ping with a Pong carrying the same payload (§5.5.2, §5.5.3).
        case sendPong([UInt8])
        /// Send a Close frame (code nil → empty body), then close the TCP connection. Used both
        /// to answer a peer-initiated close (§5.5.1: echo the code; §7.1.1: the server closes
        /// TCP first) and to _Fail the WebSocket Connection_ (§7.1.7).
        case sendCloseAndDisconnect(code: UInt16?, reason: String)
        /// The peer answered our Close: the handshake is complete, close the TCP connection.
        case disconnect
    }

    /// What to do for a locally requested close.
    public enum CloseAction: Equatable, Sendable {
        case none
        /// Send this Close frame, then start the `closeTimeout` timer.
        case sendClose(code: UInt16, reason: String)
    }

    public private(set) var state: State = .open
    /// The close status to report to the application: the peer's code/reason when it closed,
    /// ours when we closed or failed the connection; nil code = none was exchanged (1005/1006).
    public private(set) var closeCode: UInt16?
    public private(set) var closeReason: String = ""

    private let maxMessageSize: Int
    private let requireMaskedFrames: Bool

    /// The opcode (.text/.binary) of the fragmented message in progress, if any.
    private var fragmentOpcode: WebSocketOpcode?
    private var fragments: [UInt8] = []
    private var utf8 = UTF8Validator()
    /// Fail-fast UTF-8 check over the frame still arriving: bytes checked so far and the state.
    private var partialValidated = 0
    private var partialUTF8 = UTF8Validator()

    /// - Parameter requireMaskedFrames: true on the server (§5.1: a server MUST close the
    ///   connection on an unmasked client frame); false only to reuse the machine client-side.
    public init(maxMessageSize: Int, requireMaskedFrames: Bool = true) {
        self.maxMessageSize = maxMessageSize
        self.requireMaskedFrames = requireMaskedFrames
    }

    public init(configuration: WebSocketConfiguration) {
        self.init(maxMessageSize: configuration.maxMessageSize)
    }

    // MARK: Inbound

    public mutating func receive(_ frame: WebSocketFrame) -> Action {
        partialValidated = 0  // frames arrive in order: this completes any partial one
        switch state {
        case .closed:
            return .none
        case .closing:
            // §7.1.2/§1.4: after sending Close we discard data and wait for the peer's Close.
            if frame.opcode == .close {
                state = .closed
                return .disconnect
            }
            return .none
        case .open:
            break
        }
        if let error = validate(frame) { return fail(error) }

        switch frame.opcode {
        case .ping:
            return .sendPong(frame.payload)
        case .pong:
            return .none  // unsolicited pongs are allowed and ignored (§5.5.3)
        case .close:
            return receiveClose(frame.payload)
        case .continuation:
            guard let opcode = fragmentOpcode else { return fail(.unexpectedContinuation) }
            return appendFragment(frame, messageOpcode: opcode)
        default:  // .text, .binary
            guard fragmentOpcode == nil else { return fail(.expectedContinuation) }
            if frame.fin {
                // Unfragmented message: no copy into the reassembly buffer.
                guard frame.payload.count <= maxMessageSize else { return fail(.messageTooLarge) }
                if frame.opcode == .text {
                    guard UTF8Validator.isValid(frame.payload) else { return fail(.invalidUTF8) }
                    return .deliver(.text(String(decoding: frame.payload, as: UTF8.self)))
                }
                return .deliver(.binary(frame.payload))
            }
            fragmentOpcode = frame.opcode
            fragments = []
            utf8 = UTF8Validator()
            return appendFragment(frame, messageOpcode: frame.opcode)
        }
    }

    /// For a frame whose header has arrived but whose payload hasn't (yet): the payload offset
    /// from which the machine wants bytes for an early UTF-8 check, or nil if it doesn't (not
    /// part of a text message, nothing new, or a header that will fail anyway).
    public func partialPayloadOffset(for header: WebSocketFrameDecoder.Header) -> Int? {
        guard state == .open, header.rsv == 0, header.isMasked || !requireMaskedFrames,
              header.availablePayload > partialValidated else { return nil }
        let isText = (header.opcode == .text && fragmentOpcode == nil)
            || (header.opcode == .continuation && fragmentOpcode == .text)
        return isText ? partialValidated : nil
    }

    /// More payload of the partial text frame (from `partialPayloadOffset`). Fails with 1007 as
    /// soon as the message so far cannot be valid UTF-8 (§8.1), without waiting for the frame
    /// to end. The complete frame is still fully checked by `receive(_:)`.
    public mutating func receivePartialPayload(_ bytes: [UInt8], of header: WebSocketFrameDecoder.Header) -> Action {
        guard state == .open else { return .none }
        if partialValidated == 0 { partialUTF8 = header.opcode == .continuation ? utf8 : UTF8Validator() }
        partialValidated += bytes.count
        guard partialUTF8.feed(bytes) else { return fail(.invalidUTF8) }
        return .none
    }

    /// The decoder rejected the byte stream: fail the connection with the error's code.
    public mutating func decodingFailed(_ error: WebSocketProtocolError) -> Action {
        switch state {
        case .open: return fail(error)
        case .closing:
            // We already sent a Close; we can't send another (§5.5.1), just drop.
            state = .closed
            return .disconnect
        case .closed: return .none
        }
    }

    // MARK: Local requests

    /// The application wants to close (§7.1.2 _Start the WebSocket Closing Handshake_).
    public mutating func close(code: UInt16 = WebSocketCloseCode.normalClosure, reason: String = "") -> CloseAction {
        guard state == .open else { return .none }
        state = .closing
        closeCode = code
        closeReason = reason
        releaseFragments()
        return .sendClose(code: code, reason: reason)
    }

    /// The `closeTimeout` timer fired. True → drop the TCP connection now.
    public mutating func closeTimeoutElapsed() -> Bool {
        guard state == .closing else { return false }
        state = .closed
        return true
    }

    /// The TCP connection is gone (for whatever reason); nothing more can happen.
    public mutating func connectionClosed() {
        state = .closed
        releaseFragments()
    }

    // MARK: Private

    /// Per-frame rules that don't depend on message state.
    private func validate(_ frame: WebSocketFrame) -> WebSocketProtocolError? {
        // §5.2: "MUST be 0 unless an extension is negotiated" — we negotiate none.
        if frame.rsv != 0 { return .reservedBitsSet }
        if !frame.opcode.isKnown { return .unknownOpcode(frame.opcode.rawValue) }
        // §5.1: the server MUST close the connection upon an unmasked frame.
        if requireMaskedFrames && !frame.isMasked { return .unmaskedFrame }
        if frame.opcode.isControl {
            // §5.5: control frames have payload ≤ 125 bytes and MUST NOT be fragmented.
            if frame.payload.count > 125 { return .controlFrameTooLong }
            if !frame.fin { return .fragmentedControlFrame }
        }
        return nil
    }

    private mutating func appendFragment(_ frame: WebSocketFrame, messageOpcode: WebSocketOpcode) -> Action {
        // Size check before growing the buffer.
        guard frame.payload.count <= maxMessageSize - fragments.count else { return fail(.messageTooLarge) }
        if messageOpcode == .text {
            // Validate each fragment as it arrives so an invalid prefix fails fast (§8.1).
            guard utf8.feed(frame.payload) else { return fail(.invalidUTF8) }
        }
        fragments.append(contentsOf: frame.payload)
        guard frame.fin else { return .none }

        // A text message must not end in the middle of a scalar.
        if messageOpcode == .text && !utf8.isComplete { return fail(.invalidUTF8) }
        let bytes = fragments
        releaseFragments()
        if messageOpcode == .text {
            return .deliver(.text(String(decoding: bytes, as: UTF8.self)))
        }
        return .deliver(.binary(bytes))
    }

    /// §5.5.1: optional body = 2-byte code + UTF-8 reason. Echo the code back (§5.5.1), or send
    /// an empty Close if the peer sent none.
    private mutating func receiveClose(_ payload: [UInt8]) -> Action {
        if payload.isEmpty {
            state = .closed
            closeCode = nil
            closeReason = ""
            releaseFragments()
            return .sendCloseAndDisconnect(code: nil, reason: "")
        }
        guard payload.count >= 2 else { return fail(.invalidClosePayload) }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard WebSocketCloseCode.isValidReceived(code) else { return fail(.invalidCloseCode(code)) }
        let reasonBytes = Array(payload[2...])
        guard UTF8Validator.isValid(reasonBytes) else { return fail(.invalidCloseReason) }
        state = .closed
        closeCode = code
        closeReason = String(decoding: reasonBytes, as: UTF8.self)
        releaseFragments()
        return .sendCloseAndDisconnect(code: code, reason: "")
    }

    /// §7.1.7 _Fail the WebSocket Connection_: send Close with the error's code, drop TCP.
    private mutating func fail(_ error: WebSocketProtocolError) -> Action {
        state = .closed
        closeCode = error.closeCode
        closeReason = error.closeReason
        releaseFragments()
        return .sendCloseAndDisconnect(code: error.closeCode, reason: error.closeReason)
    }

    private mutating func releaseFragments() {
        fragmentOpcode = nil
        fragments = []
        utf8 = UTF8Validator()
    }
}
