/// Readiness the event loop asks for (`interest`) or a poller reports for a descriptor.
public struct PollerEvents: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Data (or a pending connection, or EOF) can be read.
    public static let readable = PollerEvents(rawValue: 1 << 0)
    /// The send buffer has room.
    public static let writable = PollerEvents(rawValue: 1 << 1)
    /// The peer hung up (EPOLLHUP, POLLHUP, EV_EOF). Reported without being asked for.
    public static let hangup = PollerEvents(rawValue: 1 << 2)
    /// An error is pending on the socket (EPOLLERR, POLLERR/POLLNVAL, EV_EOF with an error).
    /// Reported without being asked for.
    public static let error = PollerEvents(rawValue: 1 << 3)

    /// What a backend found ready, from its own flags (each backend maps its flags to these four).
    init(readable: Bool, writable: Bool, hangup: Bool, error: Bool) {
        var ready: PollerEvents = []
        if readable { ready.insert(.readable) }
        if writable { ready.insert(.writable) }
        if hangup { ready.insert(.hangup) }
        if error { ready.insert(.error) }
        self = ready
    }
}

/// One readiness report: the token given at registration and what is ready.
struct PollerEvent {
    var token: UInt64
    var events: PollerEvents
}

/// A choice of an event loop's backend whose `auto` an environment variable can settle for every
/// loop in a process, test servers included (`PollerKind`, `IORingMode`): the variable is the
/// setting's own name, so one switch reaches loops that no configuration reaches.
public protocol EnvironmentOverridable: RawRepresentable, CustomStringConvertible where RawValue == String {
    static var environmentVariable: String { get }
}

extension EnvironmentOverridable {
    public var description: String { rawValue }

    /// The case the environment variable names (in any letter case); nil when it is unset or
    /// names none.
    static var environmentOverride: Self? {
        getenv(environmentVariable).flatMap { Self(rawValue: String(cString: $0).lowercased()) }
    }
}

/// The readiness backend an `EventLoop` waits on (setting `server.poller`).
public enum PollerKind: String, Sendable, CaseIterable, EnvironmentOverridable {
    /// `TOUCHSYNC_SERVER_POLLER` when set in the environment, else the platform's native backend
    /// (epoll on Linux, kqueue on Darwin).
    case auto
    /// epoll(7), Linux.
    case epoll
    /// kqueue(2), macOS and the BSDs.
    case kqueue
    /// poll(2), any POSIX system: the portable fallback (O(descriptors) per wait).
    case poll

    /// The environment variable `auto` consults (the same name the `server.poller` setting reads),
    /// so every loop in a process — test servers included — can be switched to another backend.
    public static let environmentVariable = "TOUCHSYNC_SERVER_POLLER"

    /// `auto` resolved: the environment override when it names a backend, else the platform's
    /// default. Other kinds resolve to themselves.
    public var resolved: PollerKind {
        guard self == .auto else { return self }
        if let kind = Self.environmentOverride, kind != .auto { return kind }
        return Platform.defaultPoller
    }

    /// True when this build can run the backend (`auto` always can).
    public var isAvailable: Bool { self == .auto || Platform.availablePollers.contains(self) }
}

public enum PollerError: Error, Sendable, CustomStringConvertible {
    case unavailable(PollerKind)
    public var description: String {
        switch self {
        case .unavailable(let kind):
            return "poller \"\(kind)\" (server.poller / \(PollerKind.environmentVariable)) is not available on this system (available: "
                + Platform.availablePollers.map(\.rawValue).joined(separator: ", ") + ")"
        }
    }
}

/// A level-triggered readiness multiplexer: the one OS-specific part of an `EventLoop`.
///
/// Backends: `EpollPoller` (Linux), `KQueuePoller` (Darwin), `PollPoller` (any POSIX system).
/// Contract, identical for all three, so the loop above them does not know which one runs:
/// - level-triggered: a descriptor that stays ready is reported again by the next `wait`;
/// - `token` identifies a registration (never reused by the loop), so a report for a descriptor
///   closed and reused during the same iteration is recognised as stale;
/// - `.hangup` and `.error` are reported whether asked for or not (kqueue: for enabled filters);
/// - the wake-up is internal: `wakeUp()` from any thread makes a blocked `wait` return (or the
///   next one return at once), and the wake-up itself is never reported.
/// Every method except `wakeUp` is called on the loop thread only.
protocol Poller: AnyObject {
    var kind: PollerKind { get }
    func add(fd: Int32, token: UInt64, interest: PollerEvents) throws
    func modify(fd: Int32, token: UInt64, interest: PollerEvents) throws
    /// Forgets `fd`; errors (e.g. the descriptor is already gone) are ignored.
    func remove(fd: Int32, token: UInt64)
    /// Waits at most `timeoutMilliseconds` (-1: no limit) and writes up to `events.count` reports
    /// into `events`, returning how many. An interrupted wait (EINTR) returns 0.
    func wait(timeoutMilliseconds: Int32, into events: UnsafeMutableBufferPointer<PollerEvent>) throws -> Int
    /// Thread-safe.
    func wakeUp()
    /// Closes the backend's descriptors. Loop thread, after the last `wait`.
    func close()
}
