import TSSockets

/// The periods of the mix (bench/README.md, "Capacity"), in nanoseconds.
struct CapacityMix {
    var heart: UInt64 = 10_000_000_000
    var write: UInt64 = 20_000_000_000
    var myRooms: UInt64 = 60_000_000_000
    var interactionState: UInt64 = 30_000_000_000
    var roomSwitch: UInt64 = 120_000_000_000
    var background: UInt64 = 300_000_000_000
    var backgroundPause: UInt64 = 5_000_000_000
    var dragUpdates = 5
    var dragInterval: UInt64 = 100_000_000
}

/// The simulated users on one event loop: which are active, the paced connects of a step's new
/// users, the loop's own lag, and the random numbers of the jitter.
// @unchecked Sendable: loop-confined; the orchestrating thread reads it through `loop.submitAndWait`.
final class CapacityDriver: @unchecked Sendable {
    let loop: EventLoop
    let clock = SystemClock()
    let host: String
    let port: Int
    let seed: CapacitySeed
    let mix: CapacityMix
    let recorder: CapacityRecorder
    /// Members (user indexes) of each room.
    let roomMembers: [[Int]]
    private(set) var users: [CapacityUser] = []
    private(set) var activeCount = 0
    /// Users of the current step that have been online at least once.
    private(set) var ready = 0
    private var connectQueue: [Int] = []
    private var connecting = 0
    private let connectWindow: Int
    private var rng: UInt64

    /// `sources`: the local addresses users connect from, `usersPerSource` consecutive users each
    /// (nil: the kernel's choice).
    init(loop: EventLoop, host: String, port: Int, seed: CapacitySeed, mix: CapacityMix, sources: [String]?, usersPerSource: Int,
         connectWindow: Int, randomSeed: UInt64) {
        self.loop = loop
        self.host = host
        self.port = port
        self.seed = seed
        self.mix = mix
        self.connectWindow = connectWindow
        rng = randomSeed | 1
        recorder = CapacityRecorder(clock: clock)
        roomMembers = (0..<seed.roomIds.count).map { CapacityLayout.members(ofRoom: $0) }
        users = []
        users.reserveCapacity(seed.users)
        for u in 0..<seed.users {
            let source = sources.map { $0[(u / max(1, usersPerSource)) % $0.count] }
            users.append(CapacityUser(index: u, driver: self, token: seed.tokens[u], source: source))
        }
    }

    /// Makes users 0..<n the active ones: new ones connect (at most `connectWindow` handshakes at
    /// once), users past n disconnect. Loop only.
    func setActive(_ n: Int) {
        if n < activeCount {
            for u in users[n..<activeCount] { u.stop() }
            connectQueue.removeAll { $0 >= n }
            ready = min(ready, n)
        } else {
            for u in activeCount..<n {
                users[u].active = true
                connectQueue.append(u)
            }
        }
        activeCount = n
        pumpConnects()
    }

    private func pumpConnects() {
        while connecting < connectWindow, !connectQueue.isEmpty {
            let u = connectQueue.removeFirst()
            connecting += 1
            users[u].connect(returning: false)
        }
    }

    /// A user's first session is online (its room joined); a failed first attempt retries by itself.
    func userReady(_ u: CapacityUser, ok: Bool) {
        guard ok else { return }
        connecting -= 1
        ready += 1
        pumpConnects()
    }

    // MARK: the loop's lag

    /// Every 10 ms, how late the loop ran a timer that was due: a loop that lags delays every
    /// arrival it timestamps, so a lagging load side invalidates the step.
    func startLagTicker() {
        lagDue = clock.now() &+ Self.lagPeriod
        loop.scheduleTask(in: Self.lagPeriod) { self.lagTick() }
    }

    private static let lagPeriod: UInt64 = 10_000_000
    private var lagDue: UInt64 = 0

    private func lagTick() {
        let now = clock.now()
        recorder.lag(now > lagDue ? now &- lagDue : 0)
        lagDue = now &+ Self.lagPeriod
        loop.scheduleTask(in: Self.lagPeriod) { self.lagTick() }
    }

    // MARK: random numbers (xorshift64*: cheap, and a run can be repeated with --random-seed)

    func random(below n: UInt64) -> UInt64 {
        guard n > 0 else { return 0 }
        rng ^= rng >> 12
        rng ^= rng << 25
        rng ^= rng >> 27
        return (rng &* 0x2545_F491_4F6C_DD1D) % n
    }

    /// `period` × a uniform factor in [1 − spread, 1 + spread].
    func jitter(_ period: UInt64, spread: Double) -> UInt64 {
        let u = Double(random(below: 1_000_000)) / 1_000_000
        return UInt64(Double(period) * (1 - spread + 2 * spread * u))
    }
}
