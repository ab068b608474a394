import TSSockets

/// What happens during a step's steady window: latency samples, creations and the deliveries of
/// each, errors, and the loop's lag. Only what starts (a creation, an error, a finished request)
/// inside the window counts; deliveries of the window's creations are taken until the summary.
// @unchecked Sendable: loop-confined.
final class CapacityRecorder: @unchecked Sendable {
    enum Kind { case join, reconnect }

    struct Create {
        let sent: UInt64
        let creator: Int32
        let room: Int32
        /// Hash of the element id (from the ack); 0 until then.
        var hash: UInt64 = 0
        /// The creator disconnected on purpose (background) before the ack: nothing to measure.
        var abandoned = false
    }

    struct Delivery {
        let user: Int32
        let time: UInt64
        /// `element:created` (the room event); otherwise `element:created:global`.
        let roomEvent: Bool
    }

    private let clock: SystemClock
    private(set) var windowStart: UInt64 = .max
    private(set) var windowEnd: UInt64 = .max
    private(set) var creates: [Create] = []
    private(set) var deliveries: [UInt64: [Delivery]] = [:]
    private(set) var samples: [Kind: [UInt64]] = [:]
    private(set) var rest: [String: [UInt64]] = [:]
    private(set) var acks: [String: [UInt64]] = [:]
    private(set) var errors: [String: Int] = [:]
    private(set) var errorExamples: [String: String] = [:]
    private(set) var lags: [UInt64] = []
    /// Socket.IO events received (all of them, whatever the window).
    var framesIn = 0

    init(clock: SystemClock) { self.clock = clock }

    private func inWindow(_ t: UInt64) -> Bool { t >= windowStart && t <= windowEnd }

    /// Starts a window now, forgetting the last one.
    func begin() {
        creates = []
        deliveries = [:]
        samples = [:]
        rest = [:]
        acks = [:]
        errors = [:]
        errorExamples = [:]
        lags = []
        windowStart = clock.now()
        windowEnd = .max
    }

    func end() { windowEnd = clock.now() }

    /// A creation sent now; its record index, or nil outside the window.
    func create(sent: UInt64, creator: Int, room: Int) -> Int? {
        guard inWindow(sent) else { return nil }
        creates.append(Create(sent: sent, creator: Int32(creator), room: Int32(room)))
        return creates.count - 1
    }

    func abandon(_ record: Int) {
        guard record < creates.count else { return }
        creates[record].abandoned = true
    }

    func acked(_ record: Int, hash: UInt64) {
        guard record < creates.count else { return }
        creates[record].hash = hash
    }

    func delivery(_ hash: UInt64, user: Int, roomEvent: Bool) {
        guard windowStart != .max else { return }
        deliveries[hash, default: []].append(Delivery(user: Int32(user), time: clock.now(), roomEvent: roomEvent))
    }

    func sample(_ kind: Kind, _ ns: UInt64) {
        guard inWindow(clock.now()) else { return }
        samples[kind, default: []].append(ns)
    }

    func rest(_ route: String, _ ns: UInt64, status: Int, detail: String) {
        guard inWindow(clock.now()) else { return }
        rest[route, default: []].append(ns)
        if status == 0 || status >= 400 { error("REST \(route) \(status == 0 ? "connection closed" : "HTTP \(status)")", detail) }
    }

    func ack(_ event: String, _ ns: UInt64, failure: String? = nil) {
        guard inWindow(clock.now()) else { return }
        acks[event, default: []].append(ns)
        if let failure { error(event, failure) }
    }

    func error(_ kind: String, _ detail: String) {
        guard inWindow(clock.now()) else { return }
        errors[kind, default: 0] += 1
        if errorExamples[kind] == nil { errorExamples[kind] = detail }
    }

    func lag(_ ns: UInt64) {
        guard inWindow(clock.now()) else { return }
        lags.append(ns)
    }

    // MARK: the summary

    /// Creation → visible at every member: for each creation of the window, each other member
    /// of its room whose session was connected from the send until `grace` after it must have
    /// received it, `element:created` if it had the room open, else `element:created:global`
    /// (the MyRooms count). A member with neither is a lost delivery (an error). Returns the
    /// per-creation time until its last member had it ("to all"), every member's time, the
    /// member deliveries expected and the ones lost, and the creations never acknowledged.
    func visibility(driver: CapacityDriver, grace: UInt64) -> (toAll: [UInt64], perMember: [UInt64], expected: Int, lost: Int, unacked: Int) {
        var toAll: [UInt64] = [], perMember: [UInt64] = []
        var expected = 0, lost = 0, unacked = 0
        toAll.reserveCapacity(creates.count)
        for c in creates where !c.abandoned {
            guard c.hash != 0 else {
                unacked += 1
                continue
            }
            let got = deliveries[c.hash] ?? []
            var last: UInt64 = 0
            var complete = true
            var members = 0
            for m in driver.roomMembers[Int(c.room)] where m != Int(c.creator) && m < driver.activeCount {
                guard driver.users[m].wasConnected(from: c.sent, to: c.sent &+ grace) else { continue }
                expected += 1
                members += 1
                var roomAt: UInt64?, globalAt: UInt64?
                for d in got where d.user == Int32(m) {
                    if d.roomEvent { roomAt = min(roomAt ?? .max, d.time) } else { globalAt = min(globalAt ?? .max, d.time) }
                }
                guard let at = roomAt ?? globalAt else {
                    lost += 1
                    complete = false
                    continue
                }
                let took = at > c.sent ? at &- c.sent : 0
                perMember.append(took)
                last = max(last, took)
            }
            if complete && members > 0 { toAll.append(last) }
        }
        return (toAll, perMember, expected, lost, unacked)
    }
}
