import TSSockets

/// The broadcast fast path: one or more broadcasts that leave together: every WebSocket recipient gets all of its frames
/// (in the order the parts were added) in ONE write — one `send(2)` — and each event loop is
/// entered once for the whole batch, writing its own connections.
///
/// Used for one change that produces more than one event (e.g. `element:created` to the room
/// and `element:created:global` to the members' channels): a socket that receives both gets
/// them in one segment where before it could get two writes (docs/realtime.md).
///
/// Polling recipients get each part's segments appended to their queue as the part is added,
/// exactly as separate broadcasts did (Engine.IO v4 payload semantics unchanged). Sessions that
/// are pacing their set-up writes, or speak Engine.IO v3, also take the per-session path in
/// part order.
///
/// Not thread-safe: build it on one thread, then `send()` it once.
public struct EngineBroadcastBatch {
    private struct Recipient {
        let ws: any EngineWebSocketTransport
        /// Bit i set: part i (i < 64) goes to this connection.
        var mask: UInt64
        /// Parts ≥ 64 (only for batches of many distinct payloads), in order.
        var extra: [Int32]
    }

    private struct Signature: Hashable {
        let mask: UInt64
        let extra: [Int32]
    }

    /// The WebSocket frames of each part (all its packets, concatenated).
    private var frames: [[UInt8]] = []
    private var packetsOfPart: [[EnginePreEncodedPacket]] = []
    private var recipients: [Recipient] = []
    /// Each WebSocket's place in `recipients`, built only once an `add` may repeat one (one
    /// broadcast to one room, the common case, never hashes its recipients).
    private var index: [ObjectIdentifier: Int] = [:]
    private var indexed = false

    public init() {}

    public var isEmpty: Bool { frames.isEmpty }

    /// Adds the packets of one broadcast, encoded once; returns the part's number for `add`.
    public mutating func part(_ packets: [EnginePreEncodedPacket]) -> Int {
        packetsOfPart.append(packets)
        frames.append(packets.count == 1 ? packets[0].frame : packets.reduce(into: []) { $0.append(contentsOf: $1.frame) })
        return frames.count - 1
    }

    /// Sends part `part` to `sessions`. Returns how many accepted it; the others were closed (or
    /// closed now as slow consumers): polling sessions have it queued now, WebSocket ones get it
    /// from `send()`. A WebSocket listed twice for one part gets it once. `distinct`: the caller
    /// knows no session is listed twice (one room's members), which spares the first add of a
    /// batch a lookup per recipient.
    @discardableResult
    /// (Not generic: a generic entry point called from another module runs unspecialized, through
    /// witness tables, for every recipient.)
    public mutating func add(_ sessions: [EngineIOSession], toPart part: Int, distinct: Bool = false) -> Int {
        var accepted = 0
        let lookup = !(distinct && recipients.isEmpty && !indexed)
        if lookup && !indexed {
            for (i, r) in recipients.enumerated() { index[ObjectIdentifier(r.ws)] = i }
            indexed = true
        }
        if !lookup { recipients.reserveCapacity(sessions.count) }
        for s in sessions {
            guard let ws = s.activeWebSocket else {
                if s.sendPreEncoded(packetsOfPart[part]) { accepted += 1 }
                continue
            }
            accepted += 1
            if lookup {
                let key = ObjectIdentifier(ws)
                if let i = index[key] {
                    if part < 64 { recipients[i].mask |= 1 << UInt64(part) }
                    else if recipients[i].extra.last != Int32(part) { recipients[i].extra.append(Int32(part)) }
                    continue
                }
                index[key] = recipients.count
            }
            recipients.append(part < 64 ? Recipient(ws: ws, mask: 1 << UInt64(part), extra: [])
                                        : Recipient(ws: ws, mask: 0, extra: [Int32(part)]))
        }
        return accepted
    }

    /// Writes every WebSocket recipient's frames, one write per connection, one hop per loop.
    /// Recipients with the same set of parts share one buffer (copy-on-write, never copied).
    public func send() {
        guard !recipients.isEmpty else { return }
        var combined: [Signature: [UInt8]] = [:]
        func bytes(_ r: Recipient) -> [UInt8] {
            if r.extra.isEmpty, r.mask & (r.mask &- 1) == 0 {
                return frames[r.mask.trailingZeroBitCount]  // one part: its own frames
            }
            let sig = Signature(mask: r.mask, extra: r.extra)
            if let b = combined[sig] { return b }
            var b: [UInt8] = []
            var m = r.mask
            while m != 0 {
                b.append(contentsOf: frames[m.trailingZeroBitCount])
                m &= m &- 1
            }
            for p in r.extra { b.append(contentsOf: frames[Int(p)]) }
            combined[sig] = b
            return b
        }
        // Group by loop, keeping the first loop's list without a dictionary (one loop is the common case).
        var groups: [(EventLoop, [(any EngineWebSocketTransport, [UInt8])])] = []
        for r in recipients {
            let item = (r.ws, bytes(r))
            let loop = r.ws.loop
            if let g = groups.firstIndex(where: { $0.0 === loop }) {
                groups[g].1.append(item)
            } else {
                groups.append((loop, [item]))
                groups[groups.count - 1].1.reserveCapacity(recipients.count)
            }
        }
        for (loop, items) in groups {
            // On the loop, each connection appends its bytes now and is flushed once at the end of
            // this iteration; a connection over its outbound bound closes itself as a slow consumer.
            loop.executeOrRun {
                for (ws, b) in items { ws.sendFrameBytesOnLoop(b) }
            }
        }
    }
}
