import TSCrypto
import TSEngineIO
import TSJSON

/// Connection state recovery of one namespace (Socket.IO v5, socket.io 4.6+
/// `connectionStateRecovery`; the reference keeps it in its session-aware in-memory adapter):
///
/// - every event the server sends without an ack gets an offset, appended as its last argument,
///   and is kept here (encoded once, as it went out) with whom it addressed;
/// - a socket that goes away for a recoverable reason leaves its session (sid, pid, rooms,
///   user, data) here;
/// - a CONNECT carrying that `pid` and the last `offset` the client saw, within
///   `maxDisconnection`, gets the session back with every kept packet after that offset which
///   addressed it, in order.
///
/// A pure value: no locks, no I/O; `SocketIOServer` keeps it inside its hub lock. The packets are
/// bounded by age (`maxDisconnection`), count (`maxPackets`) and bytes (`maxBytes`), oldest first;
/// the sessions by age, per user (`maxSessionsPerUser`: a client that connects and drops in a
/// loop replaces its own oldest session instead of growing the table for the whole window) and
/// in total (`maxSessions`), oldest first. A session dropped early only costs its client a fresh
/// session, which the protocol allows. Offsets carry a random per-process prefix, so an offset
/// from before a restart never matches.
struct SocketIORecoveryLog {
    enum Target {
        /// A room emit, without the sockets `except` and the members of `exceptRooms`.
        case room(String, except: [String], exceptRooms: [String])
        /// An emit to listed sockets.
        case sockets(Set<String>)
    }

    struct Entry {
        let offset: String
        let target: Target
        let packets: [EnginePreEncodedPacket]
        let bytes: Int
        let at: UInt64
    }

    struct Session {
        let sid: String
        let pid: String
        let rooms: Set<String>
        let userID: String?
        let data: JSONValue
        let disconnectedAt: UInt64
    }

    let maxDisconnection: UInt64
    let maxPackets: Int
    let maxBytes: Int
    /// Sessions kept per user (sockets without a user share one allowance); 0: no bound.
    let maxSessionsPerUser: Int
    /// Sessions kept in this namespace; 0: no bound.
    let maxSessions: Int
    private let bootID: String
    private(set) var nextOffset: UInt64 = 0
    private var entries: [Entry] = []
    private var start = 0
    private var bytes = 0
    private var sessions: [String: Session] = [:]
    /// Every kept session's pid in the order kept (oldest first, from `sessionOrderStart`); an
    /// entry whose session was restored or dropped meanwhile is skipped (stale) when reached.
    private var sessionOrder: [(pid: String, at: UInt64)] = []
    private var sessionOrderStart = 0
    /// Each user's kept sessions, oldest first.
    private var sessionsOfUser: [String: [String]] = [:]
    /// Sessions dropped before their window ended, by the per-user and the total bound.
    private(set) var evictedPerUser = 0
    private(set) var evictedTotal = 0
    /// The pids dropped by the bounds since the last `takeEvicted()` (so a mirror forgets them).
    private var evictedPids: [String] = []

    init(maxDisconnectionNanoseconds: UInt64, maxPackets: Int, maxBytes: Int, maxSessionsPerUser: Int = 0, maxSessions: Int = 0) {
        maxDisconnection = maxDisconnectionNanoseconds
        self.maxPackets = max(1, maxPackets)
        self.maxBytes = max(1, maxBytes)
        self.maxSessionsPerUser = max(0, maxSessionsPerUser)
        self.maxSessions = max(0, maxSessions)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        bootID = String(decoding: SecureRandom.bytes(8).map { alphabet[Int($0 & 63)] }, as: UTF8.self)
    }

    var count: Int { entries.count - start }

    /// This process's offset prefix: which node (and namespace log) an offset comes from.
    var node: String { bootID }

    /// An offset's prefix and counter (`<prefix>-<counter>`), nil when it is not one of ours.
    static func parse(offset: String) -> (node: String, counter: UInt64)? {
        guard let dash = offset.lastIndex(of: "-"), dash != offset.startIndex,
              let counter = UInt64(offset[offset.index(after: dash)...]) else { return nil }
        return (String(offset[..<dash]), counter)
    }

    /// A new offset, unique within this process.
    mutating func makeOffset() -> String {
        nextOffset &+= 1
        return "\(bootID)-\(nextOffset)"
    }

    mutating func append(offset: String, target: Target, packets: [EnginePreEncodedPacket], now: UInt64) {
        let size = packets.reduce(0) { $0 + $1.segment.count }
        entries.append(Entry(offset: offset, target: target, packets: packets, bytes: size, at: now))
        bytes += size
        prune(now: now)
    }

    /// Drops packets past the age, count and byte bounds and sessions past their window.
    mutating func prune(now: UInt64) {
        while start < entries.count,
              count > maxPackets || bytes > maxBytes || now &- entries[start].at > maxDisconnection {
            bytes -= entries[start].bytes
            start += 1
        }
        if start > 1024 && start * 2 > entries.count {
            entries.removeFirst(start)
            start = 0
        }
        pruneSessions(now: now)
    }

    /// Drops the sessions past their window (oldest first; amortized O(1) per session).
    private mutating func pruneSessions(now: UInt64) {
        while sessionOrderStart < sessionOrder.count {
            let (pid, at) = sessionOrder[sessionOrderStart]
            if let s = sessions[pid], s.disconnectedAt == at {
                guard now > at, now - at > maxDisconnection else { break }
                removeSession(pid)
            }
            sessionOrderStart += 1
        }
        compactSessionOrder()
    }

    /// Sessions kept now.
    var sessionCount: Int { sessions.count }

    /// Entries of the keeping order, stale ones included (tests: it stays near `sessionCount`).
    var sessionOrderEntries: Int { sessionOrder.count - sessionOrderStart }

    /// Keeps `session` for the window; past `maxSessionsPerUser` the user's oldest kept session
    /// is dropped, past `maxSessions` the oldest of all.
    mutating func persist(_ session: Session) {
        pruneSessions(now: session.disconnectedAt)
        if sessions[session.pid] != nil { removeSession(session.pid) }
        sessions[session.pid] = session
        sessionOrder.append((session.pid, session.disconnectedAt))
        let user = session.userID ?? ""
        sessionsOfUser[user, default: []].append(session.pid)
        if maxSessionsPerUser > 0, let mine = sessionsOfUser[user], mine.count > maxSessionsPerUser {
            for pid in mine.prefix(mine.count - maxSessionsPerUser) {
                removeSession(pid)
                evictedPerUser += 1
                evictedPids.append(pid)
            }
        }
        while maxSessions > 0, sessions.count > maxSessions, sessionOrderStart < sessionOrder.count {
            let (pid, at) = sessionOrder[sessionOrderStart]
            sessionOrderStart += 1
            guard let s = sessions[pid], s.disconnectedAt == at else { continue }
            removeSession(pid)
            evictedTotal += 1
            evictedPids.append(pid)
        }
        compactSessionOrder()
    }

    /// The pids the bounds dropped since the last call.
    mutating func takeEvicted() -> [String] {
        defer { evictedPids = [] }
        return evictedPids
    }

    /// Removes a kept session (its place in `sessionOrder` goes stale).
    private mutating func removeSession(_ pid: String) {
        guard let s = sessions.removeValue(forKey: pid) else { return }
        let user = s.userID ?? ""
        guard var mine = sessionsOfUser[user] else { return }
        mine.removeAll { $0 == pid }
        sessionsOfUser[user] = mine.isEmpty ? nil : mine
    }

    /// Drops consumed and stale entries of `sessionOrder` once they outnumber the live ones, so
    /// sessions restored early (their entries stale until reached) cannot grow it.
    private mutating func compactSessionOrder() {
        let held = sessionOrder.count - sessionOrderStart
        let consumedFront = sessionOrderStart > 1024 && sessionOrderStart * 2 > sessionOrder.count
        guard consumedFront || held > 2 * sessions.count + 1024 else { return }
        sessionOrder = sessionOrder[sessionOrderStart...].filter { sessions[$0.pid]?.disconnectedAt == $0.at }
        sessionOrderStart = 0
    }

    /// The session of `pid` with the packets it missed after `offset`, removing the session;
    /// nil (a fresh session) when unknown, expired, of another user (then it stays for its
    /// owner), or the offset is no longer (or never was) here.
    mutating func restore(pid: String, offset: String, userID: String?, now: UInt64) -> (Session, [[EnginePreEncodedPacket]])? {
        prune(now: now)
        guard let session = sessions[pid], session.userID == userID else { return nil }
        removeSession(pid)
        guard let i = entries[start...].firstIndex(where: { $0.offset == offset }) else { return nil }
        var missed: [[EnginePreEncodedPacket]] = []
        for e in entries[(i + 1)...] where Self.addresses(e.target, session) { missed.append(e.packets) }
        return (session, missed)
    }

    static func addresses(_ target: Target, _ s: Session) -> Bool {
        switch target {
        case .room(let room, let except, let exceptRooms):
            return s.rooms.contains(room) && !except.contains(s.sid) && s.rooms.isDisjoint(with: exceptRooms)
        case .sockets(let ids): return ids.contains(s.sid)
        }
    }
}
