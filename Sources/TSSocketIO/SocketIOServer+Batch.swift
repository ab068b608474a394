import TSEngineIO
import TSJSON

/// One event of a multi-event emit (`SocketIOServer.emit(_:namespace:)`).
public struct SocketIOEmission: Sendable {
    public enum Target: Sendable {
        /// The sockets of a room, except one.
        case room(String, except: String?)
        /// The sockets of each room, each recorded as its own emit; the packet is encoded once
        /// for all of them (once per room with connection state recovery: each carries its offset).
        case rooms([String])
        /// The given sockets (e.g. one group of a per-viewer payload); `room`/`except` label the record.
        case sockets([String], room: String, except: String?)
    }

    public let event: String
    public let args: [JSONValue]
    public let target: Target

    public init(_ event: String, _ args: [JSONValue], _ target: Target) {
        self.event = event
        self.args = args
        self.target = target
    }
}

extension SocketIOServer {
    /// Emits the events of one change together: every socket gets all of its frames, in the
    /// order given, in ONE write (`EngineBroadcastBatch`), and each event loop is entered once.
    /// Each event is encoded once; the emit records, counters and the recovery log see exactly
    /// what separate `emit(_:_:toRoom:)` calls in this order would have produced. Returns the
    /// number of recipients over all events.
    @discardableResult
    public func emit(_ emissions: [SocketIOEmission], namespace: String = "/") -> Int {
        struct Group {
            let label: String
            let except: String?
            let targets: [SocketIOSocket]
            let recovery: SocketIORecoveryLog.Target
        }
        let resolved: [[Group]] = hub.withLock { h in
            let a = h.adapters[namespace]
            return emissions.map { e in
                switch e.target {
                case .room(let r, let ex):
                    return [Group(label: r, except: ex, targets: a?.members(of: r, except: ex) ?? [], recovery: .room(r, except: ex))]
                case .rooms(let rooms):
                    return rooms.map { r in Group(label: r, except: nil, targets: a?.members(of: r, except: nil) ?? [], recovery: .room(r, except: nil)) }
                case .sockets(let ids, let r, let ex):
                    return [Group(label: r, except: ex, targets: a?.sockets(withIDs: ids) ?? [], recovery: .sockets(Set(ids)))]
                }
            }
        }
        var batch = EngineBroadcastBatch()
        var records: [SocketIOEmitRecord] = []
        var total = 0
        var dropped = 0
        for (e, groups) in zip(emissions, resolved) {
            var part: Int?
            for g in groups {
                var delivered = 0
                if configuration.recoveryEnabled {
                    let packets = recoverablePackets(e.event, e.args, attachments: [], namespace: namespace, recoveryTarget: g.recovery)
                    if !g.targets.isEmpty { delivered = batch.add(g.targets.map(\.session), toPart: batch.part(packets)) }
                } else if !g.targets.isEmpty {
                    let p = part ?? batch.part(Self.preEncode(SocketIOPacketCodec.event(e.event, e.args, namespace: namespace, attachments: [])))
                    part = p
                    delivered = batch.add(g.targets.map(\.session), toPart: p)
                }
                total += delivered
                dropped += g.targets.count - delivered
                records.append(SocketIOEmitRecord(event: e.event, args: e.args, target: .room(g.label), except: g.except, recipients: delivered))
            }
        }
        batch.send()
        countEmit(delivered: total, dropped: dropped)
        for r in records { observe(r) }
        return total
    }
}
