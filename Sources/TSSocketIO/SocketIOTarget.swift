import TSJSON

/// Whom one emit reaches, as a value: the reference server's broadcast operators (`to`/`in`,
/// `except`, a single socket) gathered in one place, as socketioxide passes one `BroadcastOptions`
/// to its adapter. Always within one namespace (rooms are namespace-local, Socket.IO v5).
///
/// Every target reaches only the sockets connected to this process: the namespace's adapter is
/// in memory. Cluster fan-out happens a layer up (each node turns the same domain event into its
/// own local emit, docs/realtime.md), so there is no "local only" switch to set here.
public struct SocketIOTarget: Sendable {
    public enum Recipients: Sendable {
        /// One socket, by id (recorded as a socket emit).
        case socket(String)
        /// The sockets of each room, each room recorded as its own emit; the packet is encoded once
        /// for all of them (once per room with connection state recovery: each carries its offset).
        case rooms([String])
        /// The given sockets (e.g. one group of a per-viewer payload); `label` names the room the
        /// emit record shows.
        case sockets([String], label: String)
    }

    public var namespace: String
    public var recipients: Recipients
    /// Sockets left out (by id).
    public var exceptSockets: [String]
    /// Sockets in any of these rooms are left out.
    public var exceptRooms: [String]

    public init(namespace: String = "/", _ recipients: Recipients, exceptSockets: [String] = [], exceptRooms: [String] = []) {
        self.namespace = namespace
        self.recipients = recipients
        self.exceptSockets = exceptSockets
        self.exceptRooms = exceptRooms
    }

    /// One socket of `namespace`.
    public static func socket(_ id: String, namespace: String = "/") -> SocketIOTarget {
        SocketIOTarget(namespace: namespace, .socket(id))
    }

    /// The sockets of `room`, without `except` (a socket id).
    public static func room(_ room: String, except: String? = nil, namespace: String = "/") -> SocketIOTarget {
        SocketIOTarget(namespace: namespace, .rooms([room]), exceptSockets: except.map { [$0] } ?? [])
    }

    /// The sockets of each room, each recorded as its own emit.
    public static func rooms(_ rooms: [String], namespace: String = "/") -> SocketIOTarget {
        SocketIOTarget(namespace: namespace, .rooms(rooms))
    }

    /// The listed sockets; `room` and `except` only label the emit record.
    public static func sockets(_ ids: [String], room: String, except: String? = nil, namespace: String = "/") -> SocketIOTarget {
        SocketIOTarget(namespace: namespace, .sockets(ids, label: room), exceptSockets: except.map { [$0] } ?? [])
    }

    /// This target without the sockets of `room`.
    public func except(room: String) -> SocketIOTarget {
        var t = self
        t.exceptRooms.append(room)
        return t
    }

    /// This target without socket `id`.
    public func except(socket id: String) -> SocketIOTarget {
        var t = self
        t.exceptSockets.append(id)
        return t
    }
}

/// One event addressed to one target: what `SocketIOServer.emit(_:)` sends.
public struct SocketIOEmission: Sendable {
    public let event: String
    public let args: [JSONValue]
    /// Binary attachments (a BINARY_EVENT when not empty; `args` hold
    /// `SocketIOPacket.placeholder(k)` where attachment k goes).
    public let attachments: [[UInt8]]
    public let target: SocketIOTarget

    public init(_ event: String, _ args: [JSONValue], attachments: [[UInt8]] = [], _ target: SocketIOTarget) {
        self.event = event
        self.args = args
        self.attachments = attachments
        self.target = target
    }
}
