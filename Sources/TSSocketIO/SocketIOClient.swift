import Logging
import TSEngineIO
import TSJSON
import TSSockets

/// The Socket.IO side of one Engine.IO session: its namespace sockets, binary reassembly,
/// pending acks, and a mailbox that runs incoming packets in order on a Task (so handlers
/// never run on an event-loop thread and one socket's events are handled in arrival order).
///
/// Thread-safety: mutable state is guarded by `lock`, which is a leaf (nothing is called
/// while it is held). The mailbox continuation is itself thread-safe.
// @unchecked Sendable: all mutable state is in `state`, only accessed under `lock`.
final class SocketIOClient: @unchecked Sendable {
    enum Work: Sendable {
        case connect(SocketIOPacket)
        case disconnect(String)
        case event(SocketIOPacket)
    }

    struct State {
        var sockets: [String: SocketIOSocket] = [:]
        var reassembler: SocketIOBinaryReassembler
        var nextAckID: UInt64 = 0
        var pendingAcks: [UInt64: (CheckedContinuation<Result<[JSONValue], SocketIOAckError>, Never>, ScheduledTaskHandle)] = [:]
        var closed = false
        var everConnected = false
        var connectTimer: ScheduledTaskHandle?
    }

    let session: EngineIOSession
    let timerLoop: EventLoop
    private let lock = Lock()
    private var state: State
    private let mailbox: AsyncStream<Work>.Continuation
    let stream: AsyncStream<Work>

    init(session: EngineIOSession, timerLoop: EventLoop, maxAttachments: Int) {
        self.session = session
        self.timerLoop = timerLoop
        state = State(reassembler: SocketIOBinaryReassembler(maxAttachments: maxAttachments))
        (stream, mailbox) = AsyncStream<Work>.makeStream(bufferingPolicy: .unbounded)
    }

    func socket(namespace: String) -> SocketIOSocket? { lock.withLock { state.sockets[namespace] } }

    var isClosed: Bool { lock.withLock { state.closed } }

    func armConnectTimeout(nanoseconds: UInt64) {
        let handle = timerLoop.scheduleTask(in: nanoseconds) { [weak self] in
            guard let self else { return }
            let idle = self.lock.withLock { !self.state.closed && self.state.sockets.isEmpty && !self.state.everConnected }
            if idle { self.session.close(reason: "connect timeout") }
        }
        lock.withLock { state.connectTimer = handle }
    }

    // MARK: inbound (network threads)

    /// Decodes a text message. Returns false when the packet was invalid (caller closes).
    func receive(text: String) -> Bool { reassemble { r throws(SocketIODecodeError) in try r.receive(text: text) } }

    /// Decodes a binary message (an attachment). Returns false when it was invalid (caller closes).
    func receive(binary: [UInt8]) -> Bool { reassemble { r throws(SocketIODecodeError) in try r.receive(binary: binary) } }

    /// Runs one reassembler step under the lock and dispatches the packet it completes, if any.
    private func reassemble(_ step: (inout SocketIOBinaryReassembler) throws(SocketIODecodeError) -> SocketIOPacket?) -> Bool {
        let r: Result<SocketIOPacket?, SocketIODecodeError> = lock.withLock {
            do throws(SocketIODecodeError) { return .success(try step(&state.reassembler)) } catch { return .failure(error) }
        }
        switch r {
        case .failure: return false
        case .success(nil): return true
        case .success(let p?): return dispatch(p)
        }
    }

    private func dispatch(_ p: SocketIOPacket) -> Bool {
        switch p.type {
        case .connect: mailbox.yield(.connect(p))
        case .disconnect: mailbox.yield(.disconnect(p.namespace))
        case .event, .binaryEvent: mailbox.yield(.event(p))
        case .ack, .binaryAck:
            if let id = p.ackID { resolveAck(id, .success(p.data?.arrayValue ?? [])) }
        case .connectError:
            return false  // only servers send CONNECT_ERROR
        }
        return true
    }

    // MARK: sockets

    /// Adds a connected socket; false when the client closed meanwhile or the namespace is taken.
    func add(_ socket: SocketIOSocket) -> Bool {
        lock.withLock {
            guard !state.closed, state.sockets[socket.namespace] == nil else { return false }
            state.sockets[socket.namespace] = socket
            state.everConnected = true
            state.connectTimer?.cancel()
            state.connectTimer = nil
            return true
        }
    }

    /// Removes the socket if it is still this client's; true when it was.
    func remove(_ socket: SocketIOSocket) -> Bool {
        lock.withLock {
            guard let s = state.sockets[socket.namespace], s === socket else { return false }
            state.sockets[socket.namespace] = nil
            return true
        }
    }

    /// Marks the client closed; returns its sockets. Pending acks fail with `.disconnected`.
    func close() -> [SocketIOSocket] {
        let (sockets, acks): ([SocketIOSocket], [(CheckedContinuation<Result<[JSONValue], SocketIOAckError>, Never>, ScheduledTaskHandle)]) = lock.withLock {
            guard !state.closed else { return ([], []) }
            state.closed = true
            state.connectTimer?.cancel()
            let s = Array(state.sockets.values)
            let a = Array(state.pendingAcks.values)
            state.sockets.removeAll()
            state.pendingAcks.removeAll()
            return (s, a)
        }
        mailbox.finish()
        for (cont, timer) in acks {
            timer.cancel()
            cont.resume(returning: .failure(.disconnected))
        }
        return sockets
    }

    // MARK: acks (server → client)

    func registerAck(_ cont: CheckedContinuation<Result<[JSONValue], SocketIOAckError>, Never>, timeoutNanoseconds: UInt64) -> UInt64? {
        lock.withLock {
            guard !state.closed else { return nil }
            let id = state.nextAckID
            state.nextAckID &+= 1
            let timer = timerLoop.scheduleTask(in: timeoutNanoseconds) { [weak self] in
                self?.resolveAck(id, .failure(.timeout))
            }
            state.pendingAcks[id] = (cont, timer)
            return id
        }
    }

    func resolveAck(_ id: UInt64, _ result: Result<[JSONValue], SocketIOAckError>) {
        guard let (cont, timer) = lock.withLock({ state.pendingAcks.removeValue(forKey: id) }) else { return }
        timer.cancel()
        cont.resume(returning: result)
    }
}
