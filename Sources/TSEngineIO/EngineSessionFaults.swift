import TSSockets

/// A fault injected into the outbound Socket.IO packets of one session, so a client's offline
/// paths can be tested against a real server (test mode, `POST /api/test/faults`,
/// docs/test-mode.md). Engine.IO heartbeat packets are never faulted: a delayed or held socket
/// stays alive, as a slow or suspended client's connection does.
public enum EngineFault: Sendable, Equatable {
    /// Every outbound packet leaves this many milliseconds after it was sent, in order.
    case delay(milliseconds: Int)
    /// The next `count` events named in `events` are not delivered.
    case drop(events: Set<String>, count: Int)
    /// Outbound packets queue until `release` (as while an app is suspended).
    case hold
    /// Ends `hold`: the queued packets flow in order (each no earlier than its delay allows).
    case release
}

/// The faults active on one session, as `GET /api/test/faults` lists them.
public struct EngineFaultSnapshot: Sendable, Equatable {
    public let sid: String
    public let delayMilliseconds: Int
    public let holding: Bool
    public let dropEvents: [String]
    public let dropRemaining: Int
    /// Nothing is sent and nothing received until the client's ping timeout ends it.
    public let silenced: Bool
    /// Packets queued by `delay`/`hold`, and their encoded size.
    public let queuedPackets: Int
    public let queuedBytes: Int
}

/// The faults of one session, installed around its outbound packets from outside
/// (`EngineOutboundStage`, by the test-mode API in `EngineIOSession+Faults.swift`): the session
/// itself has no fault code. Exists only while a fault is active or its queue drains, so an
/// unfaulted session pays one nil pointer. Every field is guarded by `lock`, which is taken
/// inside the session's lock where both are held (never the other way round).
// @unchecked Sendable: every mutable field is guarded by `lock`.
final class EngineSessionFaults: EngineOutboundStage, @unchecked Sendable {
    struct Queued {
        let packets: [EnginePreEncodedPacket]
        let bytes: Int
        /// Clock time before which the packets may not leave.
        let due: UInt64
    }

    let lock = Mutex()
    var delayNanoseconds: UInt64 = 0
    var holding = false
    var dropEvents: Set<String> = []
    var dropRemaining = 0
    var silenced = false
    /// Held or delayed packets, oldest first (`head` is the next to leave).
    private(set) var queue: [Queued] = []
    private var head = 0
    private(set) var queuedBytes = 0
    /// Bytes `queue` may hold; past it the session is closed as a slow consumer.
    var maxBufferedBytes: Int
    /// Packets taken off the queue are being written: later sends queue behind them.
    var flushing = false
    /// The deadline a flush is scheduled for on the timer loop, if any.
    var flushAt: UInt64?
    /// Told the name of each dropped event. Called with the faults' lock held: it must take
    /// only leaf locks and never call back into the session.
    var onDrop: (@Sendable (String) -> Void)?

    init(maxBufferedBytes: Int) { self.maxBufferedBytes = maxBufferedBytes }

    var queueIsEmpty: Bool { head == queue.count }
    var queuedCount: Int { queue.count - head }
    /// Nothing left to do: the session can go back to the direct path.
    var isIdle: Bool { delayNanoseconds == 0 && !holding && dropRemaining == 0 && !silenced && queueIsEmpty && !flushing }

    /// Queues packets; false when that would pass `maxBufferedBytes`.
    func enqueue(_ packets: [EnginePreEncodedPacket], now: UInt64) -> Bool {
        let bytes = packets.reduce(0) { $0 + $1.frame.count }
        guard queuedBytes + bytes <= maxBufferedBytes else { return false }
        queue.append(Queued(packets: packets, bytes: bytes, due: now &+ delayNanoseconds))
        queuedBytes += bytes
        return true
    }

    /// When the oldest queued packets may leave (nil while holding or empty).
    var nextDue: UInt64? { holding || queueIsEmpty ? nil : queue[head].due }

    /// Takes the queued packets that may leave at `now` (all of them when `ignoringDelay`), in order.
    func takeDue(now: UInt64, ignoringDelay: Bool = false) -> [[EnginePreEncodedPacket]] {
        var out: [[EnginePreEncodedPacket]] = []
        while !queueIsEmpty, ignoringDelay || (!holding && queue[head].due <= now) {
            out.append(queue[head].packets)
            queuedBytes -= queue[head].bytes
            head += 1
        }
        if head == queue.count {
            queue = []
            head = 0
        } else if head > 64 && head * 2 > queue.count {
            queue.removeFirst(head)
            head = 0
        }
        return out
    }

    func discardQueue() {
        queue = []
        head = 0
        queuedBytes = 0
    }

    func snapshot(sid: String) -> EngineFaultSnapshot {
        EngineFaultSnapshot(sid: sid, delayMilliseconds: Int(delayNanoseconds / 1_000_000), holding: holding,
                            dropEvents: dropEvents.sorted(), dropRemaining: dropRemaining, silenced: silenced,
                            queuedPackets: queuedCount, queuedBytes: queuedBytes)
    }

    /// The event name of a Socket.IO EVENT or BINARY_EVENT carried by `packet` (Socket.IO v5
    /// "Packet encoding": `2[/nsp,][ackId]["name",…]`, a binary event `5<n>-…`), else nil.
    static func eventName(_ packet: EnginePreEncodedPacket) -> String? {
        let s = packet.segment
        // Engine.IO message `4`, then the Socket.IO type: `2` event, `5` binary event.
        guard s.count > 3, s[0] == UInt8(ascii: "4"), s[1] == UInt8(ascii: "2") || s[1] == UInt8(ascii: "5") else { return nil }
        guard let open = s.firstIndex(of: UInt8(ascii: "[")), open + 1 < s.count, s[open + 1] == UInt8(ascii: "\"") else { return nil }
        var i = open + 2
        var name: [UInt8] = []
        while i < s.count, s[i] != UInt8(ascii: "\"") {
            if s[i] == UInt8(ascii: "\\") { return nil }  // escaped names: never one of ours
            name.append(s[i])
            i += 1
        }
        guard i < s.count else { return nil }
        return String(decoding: name, as: UTF8.self)
    }
}
