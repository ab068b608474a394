/// The last message number received from each other node (`RedisEventBridge`): each node numbers
/// its messages 1, 2, 3, … in publish order, so a number seen before is a copy (an `XADD` re-sent
/// after a lost connection) and a jump is how many messages never arrived. Pure; bounded to
/// `capacity` nodes (node ids are per process, so a cluster that restarts its nodes keeps making
/// new ones): past it the node heard from least recently is forgotten, and its next message is
/// taken as its first.
struct PeerNumbers {
    enum Outcome: Equatable {
        /// The next number (or the first one heard from that node): deliver it.
        case next
        /// Already received: drop it.
        case duplicate
        /// Deliver it; `missing` numbers before it never arrived.
        case gap(missing: Int64)
    }

    let capacity: Int
    private var last: [String: (number: Int64, tick: UInt64)] = [:]
    private var tick: UInt64 = 0

    init(capacity: Int) { self.capacity = max(1, capacity) }

    mutating func record(node: String, number: Int64) -> Outcome {
        tick &+= 1
        guard let previous = last[node]?.number else {
            if last.count >= capacity, let oldest = last.min(by: { $0.value.tick < $1.value.tick })?.key {
                last[oldest] = nil
            }
            last[node] = (number, tick)
            return .next
        }
        if number <= previous { return .duplicate }
        last[node] = (number, tick)
        return number == previous + 1 ? .next : .gap(missing: number - previous - 1)
    }

    var count: Int { last.count }
}
