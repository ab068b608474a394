/// What became of one message written to a `Connection`.
public enum WriteOutcome: Sendable, Equatable {
    /// Every byte was handed to the kernel.
    case delivered
    /// The connection closed first; `sentBytes` of `totalBytes` had been handed to the kernel.
    case dropped(reason: CloseReason, sentBytes: Int, totalBytes: Int)
}

/// Why an outbound deadline passed (both close the connection as `.slowConsumer`).
public enum OutboundExpiry: Sendable, Equatable {
    /// Bytes were pending and the peer took none of them for `stallTimeout`.
    case stalled
    /// The peer took the pending bytes slower than `minBytesPerSecond` overall (a total
    /// deadline: trickled reads do not reset it).
    case tooSlow
}

/// The outbound side of one connection as pure bookkeeping (no I/O, no clock of its own): the
/// FIFO of written messages, the slow-consumer rule and the drain deadlines.
///
/// The bound is about a slow reader's *backlog*, never about the size of one answer:
/// - the message at the head (the one being sent) never counts against `maxBacklogBytes`;
/// - one further message may be larger than the bound ("exempt") when it is queued while the
///   rest of the backlog is within the bound — a 10 MB answer behind a ping frame is fine;
/// - every other pending byte is backlog, and a write that would take the backlog past
///   `maxBacklogBytes` is refused: the caller drops the connection as a slow consumer.
/// So a client that keeps reading drains its answers one by one and is never refused, while
/// one that stops reading is refused as soon as data piles up beyond the bound. Memory per
/// connection is at most the head message + one exempt message + `maxBacklogBytes`.
///
/// Deadlines (checked by the owner with its injected clock): once the kernel refuses bytes
/// (`blocked`), the peer must take at least one byte every `stallTimeout`, and must take all
/// pending bytes by a *total* deadline of `stallTimeout` + pending bytes / `minBytesPerSecond`
/// (extended by each later write's size / rate, never by a trickled read). Both end when the
/// queue drains.
public struct ConnectionOutboundQueue {
    struct Message {
        var first: [UInt8]
        var second: [UInt8]
        var sent = 0
        let count: Int
        var exempt = false
        var onDone: ((WriteOutcome) -> Void)?
    }

    public var maxBacklogBytes: Int
    public var stallTimeout: UInt64
    /// 0 turns the total (rate) deadline off.
    public var minBytesPerSecond: Int

    private var messages: [Message] = []
    private var head = 0
    public private(set) var pendingBytes = 0
    /// Bytes of the exempt message (0 when there is none).
    public private(set) var exemptBytes = 0
    public private(set) var lastProgress: UInt64?
    public private(set) var drainDeadline: UInt64?

    public init(maxBacklogBytes: Int, stallTimeout: UInt64 = 30_000_000_000, minBytesPerSecond: Int = 16 * 1024) {
        self.maxBacklogBytes = maxBacklogBytes
        self.stallTimeout = stallTimeout
        self.minBytesPerSecond = minBytesPerSecond
    }

    public var isEmpty: Bool { pendingBytes == 0 }
    public var messageCount: Int { messages.count - head }
    /// Unsent bytes of the message being sent.
    public var headRemaining: Int { head < messages.count ? messages[head].count - messages[head].sent : 0 }
    /// Pending bytes that count against the bound.
    public var backlogBytes: Int { pendingBytes - headRemaining - exemptBytes }

    /// Queues one message (`first` then `second`, which may be empty). Returns false — and
    /// queues nothing — when it would pass the backlog bound (slow consumer).
    public mutating func append(_ first: [UInt8], _ second: [UInt8] = [], onDone: ((WriteOutcome) -> Void)? = nil) -> Bool {
        let n = first.count + second.count
        guard n > 0 else {
            onDone?(.delivered)
            return true
        }
        var exempt = false
        if pendingBytes > 0 {
            let backlog = backlogBytes
            if backlog + n > maxBacklogBytes {
                guard exemptBytes == 0, backlog <= maxBacklogBytes else { return false }
                exempt = true
                exemptBytes = n
            }
        }
        if head > 32 && head * 2 > messages.count {
            messages.removeSubrange(0..<head)
            head = 0
        }
        messages.append(Message(first: first, second: second, count: n, exempt: exempt, onDone: onDone))
        pendingBytes += n
        if let d = drainDeadline { drainDeadline = d &+ allowance(for: n) }
        return true
    }

    /// Nanoseconds `bytes` may take at `minBytesPerSecond`.
    private func allowance(for bytes: Int) -> UInt64 {
        guard minBytesPerSecond > 0 else { return 0 }
        return UInt64(bytes) &* 1_000_000_000 / UInt64(minBytesPerSecond)
    }

    /// The head message's unsent bytes of its current part.
    public func withHeadChunk<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard head < messages.count else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        let m = messages[head]
        if m.sent < m.first.count {
            return try m.first.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[m.sent...])) }
        }
        return try m.second.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[(m.sent - m.first.count)...])) }
    }

    /// Unsent bytes of the head message's current part.
    public var headChunkCount: Int {
        guard head < messages.count else { return 0 }
        let m = messages[head]
        return m.sent < m.first.count ? m.first.count - m.sent : m.count - m.sent
    }

    /// Copies pending bytes, in order, into `scratch` (as many as fit); returns how many.
    public func gather(into scratch: UnsafeMutableRawBufferPointer) -> Int {
        var filled = 0
        var i = head
        while i < messages.count && filled < scratch.count {
            let m = messages[i]
            // (part, offset of its first byte within the message)
            for (part, partStart) in [(m.first, 0), (m.second, m.first.count)] {
                let from = max(0, m.sent - partStart)
                if from >= part.count { continue }
                let take = min(part.count - from, scratch.count - filled)
                part.withUnsafeBytes { src in
                    UnsafeMutableRawBufferPointer(rebasing: scratch[filled..<(filled + take)])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: src[from..<(from + take)]))
                }
                filled += take
                if filled == scratch.count { return filled }
            }
            i += 1
        }
        return filled
    }

    /// `n` bytes were handed to the kernel at `now`. Returns the callbacks of the messages now
    /// complete (call them with `.delivered`, after updating the owner's state).
    public mutating func consume(_ n: Int, now: UInt64) -> [(WriteOutcome) -> Void] {
        var left = n
        var done: [(WriteOutcome) -> Void] = []
        pendingBytes -= n
        if n > 0 && lastProgress != nil { lastProgress = now }
        while left > 0 && head < messages.count {
            let remaining = messages[head].count - messages[head].sent
            if left < remaining {
                messages[head].sent += left
                left = 0
                break
            }
            left -= remaining
            if let cb = messages[head].onDone { done.append(cb) }
            messages[head] = Message(first: [], second: [], count: 0)  // release the storage now
            head += 1
            if head < messages.count && messages[head].exempt {
                messages[head].exempt = false
                exemptBytes = 0
            }
        }
        if head == messages.count {
            // Drained: the payloads and the message table are released, so an idle connection
            // holds no queue storage (memory per idle socket).
            messages = []
            head = 0
            lastProgress = nil
            drainDeadline = nil
        }
        return done
    }

    /// The kernel refused bytes at `now`: starts the deadlines (if not running).
    public mutating func blocked(now: UInt64) {
        guard lastProgress == nil, pendingBytes > 0 else { return }
        lastProgress = now
        drainDeadline = minBytesPerSecond > 0 ? now &+ stallTimeout &+ allowance(for: pendingBytes) : nil
    }

    /// Whether a deadline has passed at `now`.
    public func expiry(now: UInt64) -> OutboundExpiry? {
        guard pendingBytes > 0, let last = lastProgress else { return nil }
        if now >= last && now - last >= stallTimeout { return .stalled }
        if let d = drainDeadline, now >= d { return .tooSlow }
        return nil
    }

    /// When `expiry` should next be evaluated (nil while no deadline runs).
    public var nextDeadline: UInt64? {
        guard pendingBytes > 0, let last = lastProgress else { return nil }
        let stall = last &+ stallTimeout
        if let d = drainDeadline { return min(stall, d) }
        return stall
    }

    /// Removes every message; returns their callbacks with the outcome to report.
    public mutating func dropAll(reason: CloseReason) -> [((WriteOutcome) -> Void, WriteOutcome)] {
        var out: [((WriteOutcome) -> Void, WriteOutcome)] = []
        for i in head..<messages.count {
            if let cb = messages[i].onDone {
                out.append((cb, .dropped(reason: reason, sentBytes: messages[i].sent, totalBytes: messages[i].count)))
            }
        }
        messages = []
        head = 0
        pendingBytes = 0
        exemptBytes = 0
        lastProgress = nil
        drainDeadline = nil
        return out
    }
}
