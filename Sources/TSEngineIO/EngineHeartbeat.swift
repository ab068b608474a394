/// Pure heartbeat decision logic (Engine.IO v4 protocol, "Heartbeat"): the server sends a
/// `ping` every `pingInterval`; if no `pong` arrives within `pingTimeout` after a ping, the
/// session is closed ("ping timeout"). Also tracks the upgrade deadline
/// (`upgradeTimeout`, the time allowed between a websocket probe arriving and its `5`).
///
/// No timers or I/O: the owner calls `tick(now:)` at (or after) `nextDeadline` and acts on
/// the returned action. All times are `MonotonicClock` nanoseconds.
public struct EngineHeartbeat: Sendable, Equatable {
    public enum Action: Sendable, Equatable {
        case none
        /// Send a `2` ping now; the pong deadline is armed.
        case sendPing
        /// No pong within `pingTimeout`: close the session.
        case pingTimeout
        /// The upgrade did not complete in time: drop the probing transport.
        case upgradeTimeout
    }

    public let pingInterval: UInt64
    public let pingTimeout: UInt64
    // Each deadline is stored as a plain UInt64 with `UInt64.max` for "none" (8 bytes, not the
    // 16 of an optional): a session keeps one of these for its whole life.
    private var nextPingAtStorage = UInt64.max
    private var pongDeadlineStorage = UInt64.max
    private var upgradeDeadlineStorage = UInt64.max

    public private(set) var nextPingAt: UInt64? {
        get { nextPingAtStorage == .max ? nil : nextPingAtStorage }
        set { nextPingAtStorage = newValue ?? .max }
    }
    public private(set) var pongDeadline: UInt64? {
        get { pongDeadlineStorage == .max ? nil : pongDeadlineStorage }
        set { pongDeadlineStorage = newValue ?? .max }
    }
    public private(set) var upgradeDeadline: UInt64? {
        get { upgradeDeadlineStorage == .max ? nil : upgradeDeadlineStorage }
        set { upgradeDeadlineStorage = newValue ?? .max }
    }

    /// Engine.IO v3: the client pings, the server answers; the session dies when no ping came
    /// within pingInterval + pingTimeout (then `pongDeadline` holds that ping deadline).
    public let clientPings: Bool

    public init(now: UInt64, pingIntervalNanoseconds: UInt64, pingTimeoutNanoseconds: UInt64, clientPings: Bool = false) {
        pingInterval = pingIntervalNanoseconds
        pingTimeout = pingTimeoutNanoseconds
        self.clientPings = clientPings
        if clientPings {
            pongDeadline = now &+ pingIntervalNanoseconds &+ pingTimeoutNanoseconds
        } else {
            nextPingAt = now &+ pingIntervalNanoseconds
        }
    }

    /// v3: a client ping arrived; the next one is due within pingInterval + pingTimeout.
    public mutating func pingReceived(now: UInt64) {
        guard clientPings, pongDeadline != nil else { return }
        pongDeadline = now &+ pingInterval &+ pingTimeout
    }

    /// The earliest time at which `tick` has something to do.
    public var nextDeadline: UInt64? {
        let d = min(nextPingAtStorage, pongDeadlineStorage, upgradeDeadlineStorage)
        return d == .max ? nil : d
    }

    public mutating func tick(now: UInt64) -> Action {
        if let d = pongDeadline, now >= d {
            pongDeadline = nil
            nextPingAt = nil
            return .pingTimeout
        }
        if let d = upgradeDeadline, now >= d {
            upgradeDeadline = nil
            return .upgradeTimeout
        }
        if let p = nextPingAt, now >= p {
            nextPingAt = nil
            // The deadline counts from when the ping was due, not from when the timer ran: the
            // session ends at pingInterval + pingTimeout after its last pong, as the client's own
            // timer expects, however late this tick is. A tick at or past that deadline finds the
            // session already dead, exactly as `isExpired` says to a request arriving then (one
            // rule, whichever of the timer and the request comes first).
            let due = p &+ pingTimeout
            if now >= due { return .pingTimeout }
            pongDeadline = due
            return .sendPing
        }
        return .none
    }

    /// A `3` pong arrived: disarm the timeout and schedule the next ping after `pingInterval`.
    /// A pong with no ping outstanding is ignored (it cannot move the schedule forward).
    public mutating func pongReceived(now: UInt64) {
        guard !clientPings, pongDeadline != nil else { return }
        pongDeadline = nil
        nextPingAt = now &+ pingInterval
    }

    /// True when the pong deadline has passed at `now`: the session is dead even if the timer
    /// that will close it has not run yet (requests arriving past the deadline see it closed).
    public func isExpired(at now: UInt64) -> Bool {
        if let d = expiryDeadline { return now >= d }
        return false
    }

    /// When the session dies without a pong: the pong deadline, or (before the next ping went
    /// out) that ping's due time plus pingTimeout.
    public var expiryDeadline: UInt64? { pongDeadline ?? nextPingAt.map { $0 &+ pingTimeout } }

    public mutating func upgradeStarted(now: UInt64, timeoutNanoseconds: UInt64) {
        upgradeDeadline = now &+ timeoutNanoseconds
    }

    public mutating func upgradeEnded() { upgradeDeadline = nil }
}
