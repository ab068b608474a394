/// Pure outbound buffer of a long-polling session (Engine.IO v4, "HTTP long-polling": packets
/// wait on the server until the client's next GET, which receives all of them in one payload).
///
/// Holds encoded segments (as `EnginePacketCodec.encodeText` writes them) so that a
/// broadcast encodes once and every polling recipient appends the same bytes. Bounded by
/// `maxBytes` (`EngineIOConfiguration.maxBufferedPacketsBytes`), which bounds the *backlog*, not
/// the size of one answer: the largest queued packet does not count, so one packet of any size
/// (e.g. a room's `elements:batch`) waits for the next GET, while a client that does not poll
/// and lets other packets pile up past the bound is a slow consumer and its session is closed.
public struct EnginePollingQueue: Sendable {
    public let maxBytes: Int
    public private(set) var segments: [[UInt8]] = []
    public private(set) var bufferedBytes = 0
    /// Size of the largest queued segment (exempt from the bound).
    public private(set) var largestSegment = 0

    public init(maxBytes: Int) { self.maxBytes = maxBytes }

    public var isEmpty: Bool { segments.isEmpty }

    /// Appends one encoded packet; false (and nothing appended) when it would pass the bound.
    public mutating func append(_ segment: [UInt8]) -> Bool {
        let added = segment.count + (segments.isEmpty ? 0 : 1)
        let largest = max(largestSegment, segment.count)
        guard bufferedBytes + added - largest <= maxBytes else { return false }
        segments.append(segment)
        bufferedBytes += added
        largestSegment = largest
        return true
    }

    /// Appends several segments atomically (all or none).
    public mutating func append(contentsOf list: [[UInt8]]) -> Bool {
        var added = 0
        var empty = segments.isEmpty
        var largest = largestSegment
        for s in list {
            added += s.count + (empty ? 0 : 1)
            largest = max(largest, s.count)
            empty = false
        }
        guard bufferedBytes + added - largest <= maxBytes else { return false }
        segments.append(contentsOf: list)
        bufferedBytes += added
        largestSegment = largest
        return true
    }

    /// Removes and returns everything as one `\x1e`-joined payload.
    public mutating func drainPayload() -> [UInt8] {
        let out = EnginePacketCodec.joinPayload(segments)
        segments.removeAll(keepingCapacity: true)
        bufferedBytes = 0
        largestSegment = 0
        return out
    }

    /// Removes and returns the raw segments (used when the session moves to WebSocket).
    public mutating func drainSegments() -> [[UInt8]] {
        let out = segments
        segments.removeAll()
        bufferedBytes = 0
        largestSegment = 0
        return out
    }
}
