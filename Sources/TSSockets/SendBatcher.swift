import Logging

/// The io_uring path of an event loop's end-of-iteration flush.
///
/// When one iteration wrote to several connections — a broadcast's hop writes one frame buffer
/// to every socket of the room on this loop — their pending bytes are copied into a staging
/// area and sent with one IORING_OP_SEND each, all submitted by one io_uring_enter(2) per chunk
/// (`ringEntries` sends or `stagingBytes` bytes, whichever fills first) instead of one send(2)
/// per connection: the same kernel TCP work without a system call entry and exit per socket
/// (bench/RESULTS.md, "Fan-out through io_uring"). The sends carry MSG_DONTWAIT, so each one
/// completes during the submit — a full socket buffer with EAGAIN, never a wait that would block
/// the loop — and each completion is handled as `Connection.flush` handles a send(2) result
/// (`Connection.completeBatchedSend`). Connections with more pending than `maxBytesPerSend`
/// (large HTTP responses), or nothing pending (a graceful close), take the send(2) path.
/// Between staging and the last completion of a chunk no handler code runs, so a connection
/// closed in the hop is never submitted and a descriptor is never closed while its send is in
/// flight; a connection closed by handler code run for an earlier completion ignores its own.
/// TLS needs nothing special: its queue already holds the ciphertext.
///
/// Loop thread only (not Sendable).
final class SendBatcher {
    /// Submission slots of the ring, which is also the most sends per io_uring_enter(2).
    static let ringEntries = 256
    /// Bytes staged per submission at most (allocated once per loop with the ring).
    static let stagingBytes = 256 * 1024
    /// A connection with more pending bytes than this is flushed with send(2) (a broadcast frame
    /// is a few hundred bytes; a large response is sent from its own storage without a copy).
    static let maxBytesPerSend = 16 * 1024
    /// Fewer connections to flush than this take the send(2) path: the ring saves one system
    /// call per connection and costs one submit, so one or two sockets gain nothing.
    static let minimumConnections = 3

    private let ring: SendRing
    private let staging: UnsafeMutableRawBufferPointer
    /// The chunk being filled: each connection and how many bytes it staged (reused).
    private var batch: [(connection: Connection, staged: Int)] = []
    private var plain: [Connection] = []
    private var results: [Int32] = []

    /// Logged once per process when the ring is refused, so a server with several loops (or a
    /// test process with many servers) says it once.
    private static let refusalLogged = LockedValue(false)

    /// A batcher over a new ring, or nil (one send(2) per connection) with one log line saying why.
    static func make(logger: Logger) -> SendBatcher? {
        var failure: String?
        if let ring = SendRing(entries: ringEntries, failure: &failure) { return SendBatcher(ring: ring) }
        let first = refusalLogged.withLock { logged -> Bool in
            defer { logged = true }
            return !logged
        }
        if first {
            logger.notice("io_uring is not available (\(failure ?? "unknown")); the event loops send with one send(2) per connection (server.ioUring = auto; set it to off to skip the check)")
        }
        return nil
    }

    private init(ring: SendRing) {
        self.ring = ring
        staging = .allocate(byteCount: Self.stagingBytes, alignment: 16)
        batch.reserveCapacity(ring.capacity)
        results.reserveCapacity(ring.capacity)
    }

    deinit { staging.deallocate() }

    /// Flushes `list[from..<to]` (the loop's flush list; entries appended meanwhile by handler
    /// code are the caller's to flush next).
    func flush(_ list: [Connection], from: Int, to end: Int, loop: EventLoop) {
        var i = from
        while i < end {
            var used = 0
            fill: while i < end && batch.count < ring.capacity {
                let connection = list[i]
                let room = UnsafeMutableRawBufferPointer(rebasing: staging[used...])
                switch connection.stageBatchedSend(into: room, maxBytes: Self.maxBytesPerSend) {
                case .skip:
                    break
                case .plain:
                    plain.append(connection)
                case .noRoom:
                    break fill  // this chunk is full: submit it, then stage this connection again
                case .staged(let n):
                    batch.append((connection, n))
                    used += n
                }
                i += 1
            }
            submit(loop: loop)
            // send(2) for the rest, after the chunk (their handler code may close connections).
            for connection in plain { connection.flushScheduledWrites() }
            plain.removeAll(keepingCapacity: true)
        }
    }

    private func submit(loop: EventLoop) {
        guard !batch.isEmpty else { return }
        var offset = 0
        var queued = 0
        for (index, entry) in batch.enumerated() {
            let bytes = UnsafeRawBufferPointer(rebasing: staging[offset..<(offset + entry.staged)])
            offset += entry.staged
            guard ring.queue(fd: entry.connection.socket.fd, bytes, tag: UInt64(index)) else { break }
            queued += 1
        }
        let rc = ring.submitAndWait()
        loop.counters.ringSubmissions &+= 1
        loop.counters.ringSends &+= queued
        // Results in submission order; a send that got no completion (withdrawn after a failed
        // submit) was not sent: its bytes are still queued and it takes the send(2) path.
        results.removeAll(keepingCapacity: true)
        results.append(contentsOf: repeatElement(Int32.min, count: batch.count))
        while let (tag, result) = ring.nextCompletion() {
            if tag < UInt64(results.count) { results[Int(tag)] = result }
        }
        if rc < 0 {
            loop.logger.warning("io_uring_enter failed (errno \(-rc)); the sends it did not take go out with send(2)")
        }
        let now = loop.clock.now()
        for (index, entry) in batch.enumerated() {
            if results[index] == Int32.min {
                entry.connection.flushScheduledWrites()
            } else {
                entry.connection.completeBatchedSend(results[index], staged: entry.staged, now: now)
            }
        }
        batch.removeAll(keepingCapacity: true)
    }
}
