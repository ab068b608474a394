import TSEngineIO
import TSJSON

extension SocketIOServer {
    /// The one way the server sends events to sockets it looks up (rooms, ids): every emission
    /// names its target (`SocketIOTarget`), its namespace's adapter resolves the recipients, and
    /// each event is encoded once (once per room with connection state recovery, where each
    /// carries its own offset).
    ///
    /// The events leave together: a socket gets all of its frames, in the order given, in ONE
    /// write, and each event loop is entered once (`EngineBroadcastBatch`); polling sockets get
    /// each event appended to their queue in order. The emit records, counters and the recovery
    /// log see one emit per room (or per socket group). Returns the number of recipients over
    /// all events.
    @discardableResult
    public func emit(_ emissions: [SocketIOEmission]) -> Int {
        let resolved: [[Group]] = hub.withLock { h in
            emissions.map { Self.groups(of: $0.target, in: h.adapters[$0.target.namespace]) }
        }
        return send(emissions, resolved).recipients
    }

    /// `emit(_:)`, also returning the counters of the first and last offsets given to these
    /// events (nil when recovery is off or none got one): where, in this node's offsets, they went
    /// out (a node's delivery journal for recovery across nodes).
    /// `beforeSending` gets them once the offsets are given and before any packet leaves (so
    /// that a journal write is on its way first).
    @discardableResult
    public func emitCountingOffsets(_ emissions: [SocketIOEmission],
                                    beforeSending: ((ClosedRange<UInt64>?) -> Void)? = nil) -> (recipients: Int, offsets: ClosedRange<UInt64>?) {
        let resolved: [[Group]] = hub.withLock { h in
            emissions.map { Self.groups(of: $0.target, in: h.adapters[$0.target.namespace]) }
        }
        return send(emissions, resolved, beforeSending: beforeSending)
    }

    /// One event to one target (`emit(_:)` with a single emission).
    @discardableResult
    public func emit(_ event: String, _ args: [JSONValue], attachments: [[UInt8]] = [], to target: SocketIOTarget) -> Int {
        emit([SocketIOEmission(event, args, attachments: attachments, target)])
    }

    /// `socket.emit` with connection state recovery on: addressed to that very socket (kept in
    /// the log even while it is away, so a recovered session gets it again, as the reference does).
    func emitRecoverable(_ event: String, _ args: [JSONValue], attachments: [[UInt8]], to socket: SocketIOSocket) {
        let group = Group(record: .socket(socket.id), except: nil, targets: socket.isConnected ? [socket] : [],
                          recovery: .sockets([socket.id]), logWhenAbsent: true)
        _ = send([SocketIOEmission(event, args, attachments: attachments, .socket(socket.id, namespace: socket.namespace))], [[group]])
    }

    /// The recipients of one emission, resolved by its namespace's adapter (hub lock held).
    struct Group {
        let record: SocketIOEmitTarget
        let except: String?
        let targets: [SocketIOSocket]
        let recovery: SocketIORecoveryLog.Target
        /// With recovery on, log the event even when nobody receives it now (a room whose
        /// members may come back); a socket emit to an id that is not connected is not logged.
        let logWhenAbsent: Bool
        /// No socket is listed twice (one room's members, one socket); a list of ids may repeat one.
        var distinct = true
    }

    static func groups(of target: SocketIOTarget, in adapter: SocketIONamespaceAdapter?) -> [Group] {
        let ex = target.exceptSockets, exRooms = target.exceptRooms
        switch target.recipients {
        case .socket(let id):
            let live = adapter?.sockets(withIDs: [id], except: ex, exceptRooms: exRooms) ?? []
            return [Group(record: .socket(id), except: nil, targets: live, recovery: .sockets([id]), logWhenAbsent: !live.isEmpty)]
        case .rooms(let rooms):
            return rooms.map { r in
                Group(record: .room(r), except: ex.first, targets: adapter?.members(of: r, except: ex, exceptRooms: exRooms) ?? [],
                      recovery: .room(r, except: ex, exceptRooms: exRooms), logWhenAbsent: true)
            }
        case .sockets(let ids, let label):
            return [Group(record: .room(label), except: ex.first, targets: adapter?.sockets(withIDs: ids, except: ex, exceptRooms: exRooms) ?? [],
                          recovery: .sockets(Set(ids).subtracting(ex)), logWhenAbsent: true, distinct: false)]
        }
    }

    /// Encodes each emission once, hands the bytes to every recipient through one batch, then
    /// counts and records what went out.
    private func send(_ emissions: [SocketIOEmission], _ resolved: [[Group]],
                      beforeSending: ((ClosedRange<UInt64>?) -> Void)? = nil) -> (recipients: Int, offsets: ClosedRange<UInt64>?) {
        var offsets: ClosedRange<UInt64>?
        var batch = EngineBroadcastBatch()
        var records: [SocketIOEmitRecord] = []
        records.reserveCapacity(resolved.count)
        var total = 0
        var dropped = 0
        for (e, groups) in zip(emissions, resolved) {
            let namespace = e.target.namespace
            var part: Int?
            for g in groups {
                var delivered = 0
                if configuration.recoveryEnabled {
                    if g.logWhenAbsent || !g.targets.isEmpty {
                        let (packets, counter) = recoverablePacketsCounted(e.event, e.args, attachments: e.attachments, namespace: namespace,
                                                                           recoveryTarget: g.recovery)
                        offsets = offsets.map { min($0.lowerBound, counter)...max($0.upperBound, counter) } ?? counter...counter
                        if !g.targets.isEmpty { delivered = batch.add(g.targets.map(\.session), toPart: batch.part(packets), distinct: g.distinct) }
                    }
                } else if !g.targets.isEmpty {
                    let p = part ?? batch.part(Self.preEncode(SocketIOPacketCodec.event(e.event, e.args, namespace: namespace, attachments: e.attachments)))
                    part = p
                    delivered = batch.add(g.targets.map(\.session), toPart: p, distinct: g.distinct)
                }
                total += delivered
                dropped += g.targets.count - delivered
                records.append(SocketIOEmitRecord(event: e.event, args: e.args, target: g.record, except: g.except, recipients: delivered))
            }
        }
        beforeSending?(offsets)
        batch.send()
        countEmit(delivered: total, dropped: dropped)
        for r in records { observe(r) }
        return (total, offsets)
    }
}
