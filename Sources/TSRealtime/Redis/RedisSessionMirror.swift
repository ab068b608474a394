import Logging
import TSContract
import TSJSON
import TSRedis
import TSSocketIO
import TSSync

/// Connection state recovery across nodes, Redis's part (docs/realtime-cluster.md, "Connection
/// state recovery across nodes"). Beside the events, on the bridge's Redis:
///
/// - `<prefix>:sio:session:<pid>`: each connected socket's session (`SocketIOSessionRecord` as
///   JSON), written on connect, on every room join and leave and on a recoverable disconnect,
///   refreshed for every live socket every `refreshInterval` in one pipelined batch, expiring
///   `maxDisconnection + refreshInterval` after its last write. Restoring it deletes it (`DEL`
///   answers 1 to one node only), so a session is restored at most once.
/// - `<prefix>:sio:journal:<node>`: this node's delivery journal (`RecoveryJournalEntry`), a
///   stream capped at about `maxBufferedPackets` entries, written (never awaited) after each room
///   event or join the broadcaster delivered.
///
/// A restore reads both with one round trip bounded by `restoreTimeout`; anything missing, late
/// or inconsistent gives the client a fresh session. All of it on one connection of its own
/// (`RedisCommandClient`), never on an event loop of the server.
// @unchecked Sendable: immutable after init but `refresher` and `number`, behind their locks.
public final class RedisSessionMirror: SocketIOSessionMirror, @unchecked Sendable {
    static let restoreTimeout: Duration = .seconds(2)
    let client: RedisCommandClient
    private let prefix: String
    private let hub: SocketIOServer
    private let broadcaster: RealtimeBroadcaster
    private let logger: Logger
    private let ttlMs: Int64
    private let refreshInterval: Duration
    private let journalMax: Int
    private let journalKey: [UInt8]
    private let number = LockedValue<Int64>(0)
    private let refresher = LockedValue<Task<Void, Never>?>(nil)
    private let outcomes = LockedValue<[String: UInt64]>([:])
    /// The last journal read of a few nodes: the clients of a node that died all restore within
    /// moments, and one read serves every client whose offset it holds.
    private let journals = LockedValue<[String: (at: ContinuousClock.Instant, entries: [RecoveryJournalEntry])]>([:])
    static let journalReuse: Duration = .seconds(2)
    static let journalsKept = 8

    public init(configuration: RedisConfiguration, prefix: String, hub: SocketIOServer, broadcaster: RealtimeBroadcaster, recovery: ClusterRecovery,
         logger: Logger) throws {
        let window = hub.configuration.recoveryMaxDisconnection
        journalMax = max(16, hub.configuration.recoveryMaxBufferedPackets)
        client = try RedisCommandClient(configuration: configuration, maxReplyEntries: journalMax * 2 + 64, logger: logger)
        self.prefix = prefix
        self.hub = hub
        self.broadcaster = broadcaster
        self.logger = logger
        refreshInterval = min(.seconds(10), max(.seconds(1), window / 2))
        ttlMs = Int64((window + refreshInterval).clockNanoseconds / 1_000_000)
        journalKey = Array("\(prefix):sio:journal:\(hub.recoveryNode(namespace: "/"))".utf8)
        recovery.journalWriter.set { [weak self] entry in self?.append(entry) }
        hub.setSessionMirror(self)
    }

    func start() {
        client.start()
        let interval = refreshInterval
        refresher.withLock {
            $0 = Task { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    guard let self else { return }
                    save(hub.sessionRecords())
                }
            }
        }
    }

    func stop() async {
        refresher.withLock { $0?.cancel(); $0 = nil }
        await client.stop()
    }

    private func sessionKey(_ pid: String) -> [UInt8] { Array("\(prefix):sio:session:\(pid)".utf8) }

    // MARK: SocketIOSessionMirror

    public func save(_ records: [SocketIOSessionRecord]) {
        let ttl = Array(String(ttlMs).utf8)
        client.send(records.map { r in
            RESPEncoder.command([Array("SET".utf8), sessionKey(r.pid), r.json.serialized(), Array("PX".utf8), ttl])
        })
    }

    public func forget(pid: String) {
        client.send([RESPEncoder.command([Array("DEL".utf8), sessionKey(pid)])])
    }

    /// Numbers the entry and hands it to the connection under one lock: the numbers follow the
    /// stream's order, so a hole in them is a lost write.
    private func append(_ entry: RecoveryJournalEntry) {
        let key = journalKey
        let max = Array(String(journalMax).utf8)
        number.withLock { n in
            n += 1
            let e = RecoveryJournalEntry(number: n, first: entry.first, counter: entry.counter, roomId: entry.roomId, seq: entry.seq, kind: entry.kind,
                                         sid: entry.sid, ms: entry.ms)
            var args: [[UInt8]] = [Array("XADD".utf8), key, Array("MAXLEN".utf8), [UInt8(ascii: "~")], max, [UInt8(ascii: "*")]]
            for (k, v) in e.fields { args.append(Array(k.utf8)); args.append(Array(v.utf8)) }
            client.send([RESPEncoder.command(args)])
        }
    }

    public func restore(_ attempt: SocketIORemoteRestore) async -> SocketIOSocket? {
        let key = sessionKey(attempt.pid)
        let journal = Array("\(prefix):sio:journal:\(attempt.offsetNode)".utf8)
        // A journal read lately serves when it reaches the client's offset (what follows it is
        // only needed for rooms journalled after the offset, and then later entries change nothing).
        let now = ContinuousClock.now
        let reused = journals.withLock { j -> [RecoveryJournalEntry]? in
            guard let r = j[attempt.offsetNode], now - r.at < Self.journalReuse,
                  r.entries.contains(where: { $0.counter >= attempt.offsetCounter }) else { return nil }
            return r.entries
        }
        var commands = [RESPEncoder.command([Array("GET".utf8), key])]
        if reused == nil { commands.append(RESPEncoder.command([Array("XRANGE".utf8), journal, [UInt8(ascii: "-")], [UInt8(ascii: "+")]])) }
        guard let replies = await client.request(commands, timeout: Self.restoreTimeout), replies.count == commands.count else {
            return fail(attempt, "Redis did not answer within \(Self.restoreTimeout)")
        }
        guard let bytes = replies[0].bytes, let json = try? JSONValue.parse(bytes), let record = SocketIOSessionRecord(json: json) else {
            return fail(attempt, "no session kept for it (unknown, expired, or already restored)")
        }
        guard record.userID == attempt.userID else { return fail(attempt, "the session is another user's (kept for its owner)") }
        guard record.namespace == attempt.namespace, record.node == attempt.offsetNode else {
            return fail(attempt, "its offset is not of the session's node and namespace")
        }
        guard let entries = reused ?? replies.dropFirst().first.flatMap(Self.journal) else {
            return fail(attempt, "the journal of node \(attempt.offsetNode) is not readable")
        }
        if reused == nil {
            journals.withLock { j in
                j[attempt.offsetNode] = (now, entries)
                if j.count > Self.journalsKept, let oldest = j.min(by: { $0.value.at < $1.value.at })?.key { j[oldest] = nil }
            }
        }
        // Taken: DEL answers 1 to one caller only.
        guard let taken = await client.request([RESPEncoder.command([Array("DEL".utf8), key])], timeout: Self.restoreTimeout),
              taken.first == .integer(1) else {
            return fail(attempt, "the session was restored elsewhere meanwhile")
        }
        logger.debug("restoring \(record.sid): offset counter \(attempt.offsetCounter), journal \(entries.map { "\($0.kind.rawValue)\($0.first)-\($0.counter) \($0.roomId)#\($0.seq)" })")
        switch await broadcaster.restore(record, journal: entries, counter: attempt.offsetCounter, within: Self.restoreTimeout, install: attempt.install) {
        case .success(let (socket, replayed)):
            count("recovered")
            logger.info("recovered socket \(socket.id) of node \(attempt.offsetNode) with \(record.rooms.count) rooms; \(replayed) missed events replayed")
            return socket
        case .failure(let why):
            return fail(attempt, why.description)
        }
    }

    private func fail(_ attempt: SocketIORemoteRestore, _ why: String) -> SocketIOSocket? {
        count("fresh")
        logger.notice("connection state recovery of a session of node \(attempt.offsetNode) failed: \(why); the client gets a fresh session")
        return nil
    }

    private func count(_ outcome: String) { outcomes.withLock { $0[outcome, default: 0] += 1 } }

    /// `/metrics`: restores by outcome, the ring, the writes lost.
    public func render(into out: inout PrometheusText) {
        let o = outcomes.current
        out.family("touchsync_recovery_restores_total", type: "counter",
                   help: "Sessions of another node taken over here (recovered), or given a fresh session because that could not be exact (fresh).",
                   by: "outcome", ["recovered", "fresh"].map { ($0, Double(o[$0] ?? 0)) })
        out.single("touchsync_recovery_ring_events", type: "gauge", help: "Room events kept for sessions of other nodes to recover from.",
                   Double(broadcaster.recovery?.keptEvents ?? 0))
        out.single("touchsync_recovery_writes_dropped_total", type: "counter",
                   help: "Session and journal writes to Redis dropped (queue full while Redis was down, or lost with the connection).", Double(client.dropped))
    }

    /// An `XRANGE` reply as journal entries; nil when one is malformed.
    static func journal(_ value: RESPValue) -> [RecoveryJournalEntry]? {
        guard case .array(let items?) = value else { return [] }
        var out: [RecoveryJournalEntry] = []
        out.reserveCapacity(items.count)
        for item in items {
            guard case .array(let parts?) = item, parts.count == 2, case .array(let flat?) = parts[1] else { return nil }
            var fields: [String: String] = [:]
            var i = 0
            while i + 1 < flat.count {
                if let k = flat[i].text, let v = flat[i + 1].text { fields[k] = v }
                i += 2
            }
            guard let e = RecoveryJournalEntry(fields: fields) else { return nil }
            out.append(e)
        }
        return out
    }
}
