import Logging
import TSEngineIO
import TSJSON
import TSSockets

/// The Socket.IO side of one Engine.IO session: its namespace sockets, binary reassembly,
/// pending acks, and a mailbox that runs incoming packets in order on a Task (so handlers
/// never run on an event-loop thread and one socket's events are handled in arrival order).
///
/// The mailbox Task exists only while packets are waiting or running: the first packet into
/// an empty mailbox starts one, and it ends when the mailbox is empty again. An idle connection
/// holds no Task (a suspended Task keeps its task-allocator slabs, ~5 KB after a `room:join`,
/// which was most of an idle socket's memory — bench/RESULTS.md "Memory per idle joined socket, round 3").
///
/// Thread-safety: mutable state is guarded by this client's own `lock`, a leaf (nothing is
/// called while it is held); the Engine.IO session below keeps its own. Packets are decoded
/// before the lock is taken: it only covers handing a decoded packet to the reassembler.
// @unchecked Sendable: all mutable state is in `state`, only accessed under `lock`; `process`
// is an immutable `@Sendable` closure.
final class SocketIOClient: @unchecked Sendable {
    enum Work: Sendable {
        case connect(SocketIOPacket)
        case disconnect(String)
        case event(SocketIOPacket)
    }

    struct State {
        /// One socket per namespace (usually one: kept inline, not in an array or dictionary).
        var sockets = SocketList()
        var reassembler: SocketIOBinaryReassembler
        var nextAckID: UInt64 = 0
        var pendingAcks: [UInt64: (CheckedContinuation<Result<[JSONValue], SocketIOAckError>, Never>, ScheduledTaskHandle)] = [:]
        var closed = false
        var everConnected = false
        var connectTimer: ScheduledTaskHandle?
        /// Packets not yet handed to `process`, in arrival order.
        var mailbox: [Work] = []
        /// True while a Task is draining `mailbox` (at most one, so packets run in order).
        var draining = false
    }

    let session: EngineIOSession
    let timerLoop: EventLoop
    let maxAttachments: Int
    /// Guards `state`. Nothing here calls into the session, or anything else, while holding it.
    private let lock = Mutex()
    private var state: State
    /// Runs one packet of the mailbox (`SocketIOServer.process`).
    private let process: @Sendable (Work, SocketIOClient) async -> Void

    init(session: EngineIOSession, timerLoop: EventLoop, maxAttachments: Int,
         process: @escaping @Sendable (Work, SocketIOClient) async -> Void) {
        self.session = session
        self.timerLoop = timerLoop
        self.maxAttachments = maxAttachments
        self.process = process
        state = State(reassembler: SocketIOBinaryReassembler(maxAttachments: maxAttachments))
    }

    func socket(namespace: String) -> SocketIOSocket? { lock.withLock { state.sockets.first { $0.namespace == namespace } } }

    var isClosed: Bool { lock.withLock { state.closed } }

    /// The close reason of a session that sent no CONNECT within `connectTimeout`.
    static let connectTimeoutReason = "connect timeout"

    func armConnectTimeout(nanoseconds: UInt64) {
        // Strong capture (no weak side table on every client): the timer is cancelled when a
        // namespace connects (`add`) or the client closes, which releases it.
        let handle = timerLoop.scheduleTask(in: nanoseconds) { [self] in
            let idle = self.lock.withLock { !self.state.closed && self.state.sockets.isEmpty && !self.state.everConnected }
            if idle { self.session.close(reason: Self.connectTimeoutReason) }
        }
        let cancel: Bool = lock.withLock {
            if state.closed || state.everConnected { return true }
            state.connectTimer = handle
            return false
        }
        if cancel { handle.cancel() }  // closed or connected meanwhile: release the timer now
    }

    // MARK: inbound (network threads)

    /// Decodes a text message (before taking the lock). Returns false when the packet was
    /// invalid (caller closes).
    func receive(text: String) -> Bool {
        let packet: SocketIOPacket
        do { packet = try SocketIOPacketCodec.decode(text, maxAttachments: maxAttachments) } catch { return false }
        return reassemble { r throws(SocketIODecodeError) in try r.receive(decoded: packet) }
    }

    /// Takes a binary message (an attachment). Returns false when it was unexpected (caller closes).
    func receive(binary: [UInt8]) -> Bool { reassemble { r throws(SocketIODecodeError) in try r.receive(binary: binary) } }

    /// Runs one reassembler step (no parsing) under the lock and dispatches the packet it completes, if any.
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
        case .connect: enqueue(.connect(p))
        case .disconnect: enqueue(.disconnect(p.namespace))
        case .event, .binaryEvent: enqueue(.event(p))
        case .ack, .binaryAck:
            if let id = p.ackID { resolveAck(id, .success(p.data?.arrayValue ?? [])) }
        case .connectError:
            return false  // only servers send CONNECT_ERROR
        }
        return true
    }

    /// Queues a CONNECT the client did not send (Socket.IO v4 protocol: `/` is implicit).
    func connectImplicitly(namespace: String) { enqueue(.connect(SocketIOPacket(type: .connect, namespace: namespace))) }

    // MARK: mailbox

    /// Queues a packet; starts the draining Task when none is running. Packets arriving after
    /// `close()` are dropped (those queued before it still run).
    private func enqueue(_ work: Work) {
        let start: Bool = lock.withLock {
            guard !state.closed else { return false }
            state.mailbox.append(work)
            if state.draining { return false }
            state.draining = true
            return true
        }
        // On the global pool, not on the loop that read the packet (REST handlers run on theirs):
        // measured, running it on the loop saves two hops but not time (same median), and its
        // tail is worse, since a resumed handler waits for the one loop thread that also serves
        // every other connection of the loop (bench/RESULTS.md, "Socket.IO handler executor").
        if start { Task { [self] in await drain() } }
    }

    /// Runs queued packets in order until the mailbox is empty, then ends (releasing the Task).
    private func drain() async {
        while let work = nextWork() { await process(work, self) }
    }

    private func nextWork() -> Work? {
        lock.withLock {
            if state.mailbox.isEmpty {
                state.draining = false
                state.mailbox = []  // drop any capacity grown by a burst
                return nil
            }
            return state.mailbox.removeFirst()
        }
    }

    // MARK: sockets

    /// Adds a connected socket; false when the client closed meanwhile or the namespace is taken.
    func add(_ socket: SocketIOSocket) -> Bool {
        lock.withLock {
            guard !state.closed, !state.sockets.contains(where: { $0.namespace == socket.namespace }) else { return false }
            state.sockets.append(socket)
            state.everConnected = true
            state.connectTimer?.cancel()
            state.connectTimer = nil
            return true
        }
    }

    /// Removes the socket if it is still this client's; true when it was.
    func remove(_ socket: SocketIOSocket) -> Bool {
        lock.withLock {
            state.sockets.remove(socket)
        }
    }

    /// Marks the client closed; returns its sockets. Pending acks fail with `.disconnected`.
    func close() -> [SocketIOSocket] {
        let (sockets, acks): ([SocketIOSocket], [(CheckedContinuation<Result<[JSONValue], SocketIOAckError>, Never>, ScheduledTaskHandle)]) = lock.withLock {
            guard !state.closed else { return ([], []) }
            state.closed = true
            state.connectTimer?.cancel()
            let s = state.sockets.all
            let a = Array(state.pendingAcks.values)
            state.sockets.removeAll()
            state.pendingAcks.removeAll()
            return (s, a)
        }
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

/// A client's sockets, one per namespace, in connection order: the first inline (nearly every
/// connection has exactly one), any others in an array. Invariant: `head == nil` ⇒ `rest` is empty.
struct SocketList {
    private var head: SocketIOSocket?
    private var rest: [SocketIOSocket] = []

    var isEmpty: Bool { head == nil }
    var all: [SocketIOSocket] { head.map { [$0] + rest } ?? [] }

    func first(where match: (SocketIOSocket) -> Bool) -> SocketIOSocket? {
        if let h = head, match(h) { return h }
        return rest.first(where: match)
    }

    func contains(where match: (SocketIOSocket) -> Bool) -> Bool { first(where: match) != nil }

    mutating func append(_ socket: SocketIOSocket) {
        if head == nil { head = socket } else { rest.append(socket) }
    }

    /// Removes this very socket; true when it was in the list.
    mutating func remove(_ socket: SocketIOSocket) -> Bool {
        if head === socket {
            head = rest.isEmpty ? nil : rest.removeFirst()
            return true
        }
        guard let i = rest.firstIndex(where: { $0 === socket }) else { return false }
        rest.remove(at: i)
        return true
    }

    mutating func removeAll() {
        head = nil
        rest = []
    }
}
