import TSDomain
import TSJSON
import TSSocketIO

extension RealtimeBroadcaster {
    /// Emits `event` to its recipients, or (`only`, a recovered session's replay) to that one
    /// socket when the event addresses it, personalised the same way. `journal` gets the first and
    /// last recovery offsets its emits got, before they leave (recovery across nodes).
    /// `leftOut`: recovered sockets that already have it. `reads`: what `prefetch(event)` read.
    ///
    /// The events and their payloads are the catalog's emission rules for the event's change
    /// (`RealtimeEvents.emissionTable`, room events before global ones): all of them leave in one
    /// emit, so a member's socket gets a room event and its global companion in one write.
    func broadcast(_ event: DomainEvent, reads: RecipientData, only: SocketIOSocket? = nil, journal: ((ClosedRange<UInt64>?) -> Void)? = nil,
                   leftOut: [String] = []) throws {
        let room = RealtimeConfiguration.roomChannel(event.roomId)
        let except = event.originSocketId
        let out = Emitter(hub: hub, only: only, journal: journal, leftOut: leftOut)
        defer { out.finish() }
        let rules = RealtimeEvents.emissionTable.rules(for: event.kind)
        var batch: [SocketIOEmission] = []
        batch.reserveCapacity(rules.count + 1)
        // The arguments of the change's room event, for a global event that shares them.
        var roomArgs: [JSONValue] = []
        for rule in rules {
            switch rule.shape {
            case .room(let build):
                guard let args = build(event) else { continue }
                roomArgs = args
                batch.append(out.room(rule.name, args, room, except: except))
            case .roomPerViewer(let viewing, let build):
                guard let viewer = viewing(event) else {
                    // The same payload for every viewer.
                    if let args = build(event, false) { batch.append(out.room(rule.name, args, room, except: except)) }
                    continue
                }
                try perViewer(rule.name, event, room: room, except: except, elementId: viewer.elementId,
                              actorHasReacted: viewer.actorHasReacted, reads: reads, out: out, into: &batch) { build(event, $0) }
            case .roomPerMember(let build):
                try perMember(rule.name, event, room: room, except: except, reads: reads, out: out, into: &batch) { build(event, $0) }
            case .members(let build):
                guard let args = build(event) else { continue }
                batch += global(rule.name, args, members: reads.members, roomId: event.roomId, only: only)
            case .membersSharingRoomPayload:
                batch += global(rule.name, roomArgs, members: reads.members, roomId: event.roomId, only: only)
            }
        }
        if !batch.isEmpty { out.emit(batch) }
    }

    /// A room event whose payload depends on whether each recipient has reacted to the element:
    /// one group per variant, each encoded once. With no recipient the event is still emitted to
    /// nobody, so the event log records it (docs/test-mode.md) with the variant the actor would
    /// see (`actorHasReacted`) and 0 recipients (not when replaying for one socket).
    /// `reads.hearted`: the users who have hearted the element, read before the drain;
    /// `reads.audience`: the room's sockets when the drain found nobody and so read nothing.
    private func perViewer(_ name: String, _ event: DomainEvent, room: String, except: String?, elementId: String, actorHasReacted: Bool,
                           reads: RecipientData, out: Emitter, into batch: inout [SocketIOEmission],
                           _ build: (Bool) -> [JSONValue]?) throws {
        let sockets = (out.only == nil ? reads.audience : nil) ?? out.members(of: room).filter { $0.id != except }
        guard !sockets.isEmpty else {
            if out.only == nil, let args = build(actorHasReacted) { batch.append(SocketIOEmission(name, args, .sockets([], room: room, except: except))) }
            return
        }
        let reacted = try reads.hearted?.get() ?? []
        var yes: [String] = []
        var no: [String] = []
        for s in sockets {
            if let uid = s.userID, reacted.contains(uid) { yes.append(s.id) } else { no.append(s.id) }
        }
        if !yes.isEmpty, let args = build(true) { batch.append(SocketIOEmission(name, args, .sockets(yes, room: room, except: except))) }
        if !no.isEmpty, let args = build(false) { batch.append(SocketIOEmission(name, args, .sockets(no, room: room, except: except))) }
    }

    /// A room event with the room as each recipient's user sees it (badges are the recipient's
    /// own): one payload, encoded once, per user. With nobody listening it is still logged
    /// (docs/test-mode.md), with the actor's view and 0 recipients.
    private func perMember(_ name: String, _ event: DomainEvent, room: String, except: String?, reads: RecipientData, out: Emitter,
                           into batch: inout [SocketIOEmission], _ build: (Room) -> [JSONValue]?) throws {
        let views = try reads.rooms?.get() ?? [:]
        var byUser: [String: [String]] = [:]
        for socket in out.members(of: room) where socket.id != except {
            if let uid = socket.userID { byUser[uid, default: []].append(socket.id) }
        }
        for (uid, sockets) in byUser {
            guard let r = views[uid], let args = build(r) else { continue }
            batch.append(SocketIOEmission(name, args, .sockets(sockets, room: room, except: except)))
        }
        if byUser.isEmpty, out.only == nil, let r = views[event.actorId], let args = build(r) {
            batch.append(SocketIOEmission(name, args, .sockets([], room: room, except: except)))
        }
    }

    /// A global event (keeps MyRooms counts live without joining) to every member's sockets, or to
    /// every socket: the emission to send along with the room event (members are read first, so
    /// nothing leaves before both are ready). When the members cannot be read, the room event
    /// still goes out (and the failure is logged).
    private func global(_ name: String, _ args: [JSONValue], members: Result<[String], any Error>?, roomId: String,
                        only: SocketIOSocket?) -> [SocketIOEmission] {
        guard globalEventsToMembers else {
            return [SocketIOEmission(name, args, .sockets(only.map { [$0.id] } ?? hub.connectedSockets.map(\.id), room: "*", except: nil))]
        }
        guard let members else { return [] }
        do {
            let channels = try members.get().map(RealtimeConfiguration.userChannel)
            if let only {
                // Replaying: to that socket when it is in one of the members' channels.
                let mine = only.rooms
                return channels.contains(where: mine.contains) ? [SocketIOEmission(name, args, .socket(only.id))] : []
            }
            return [SocketIOEmission(name, args, .rooms(channels))]
        } catch {
            logger.error("\(name) in room \(roomId) not sent: reading the members failed: \(error)")
            return []
        }
    }
}
