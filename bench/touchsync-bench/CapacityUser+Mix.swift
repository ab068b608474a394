import TSSockets

/// What a user does while the app is open (bench/README.md, "Capacity", has the mix and where
/// each figure comes from). Every action runs on its own timer, first at a random point of its
/// period and then every period ± 20 %, so users do not act in step; an action that falls while
/// the user is in the background or still connecting is skipped.
extension CapacityUser {
    func startTimers() {
        timerEpoch += 1
        let mix = driver.mix
        every(mix.heart) { $0.heart() }
        every(mix.write) { $0.write() }
        every(mix.myRooms) { $0.myRooms() }
        every(mix.interactionState) { $0.interactionState() }
        if mix.roomSwitch > 0 { every(mix.roomSwitch) { $0.switchRoom() } }
        if mix.background > 0 { every(mix.background) { $0.goBackground(pause: $0.driver.jitter(mix.backgroundPause, spread: 0.5)) } }
    }

    private func every(_ period: UInt64, first: UInt64? = nil, _ action: @escaping @Sendable (CapacityUser) -> Void) {
        let e = timerEpoch
        driver.loop.scheduleTask(in: first ?? driver.random(below: period)) { [self] in
            guard active, e == timerEpoch else { return }
            if isOnline { action(self) }
            every(period, first: driver.jitter(period, spread: 0.2), action)
        }
    }

    private var roomId: String { driver.seed.roomIds[room] }

    private func seededElement() -> String {
        let elements = driver.seed.roomElements[room]
        return elements[Int(driver.random(below: UInt64(elements.count)))]
    }

    // MARK: the actions

    /// A double tap: the heart toggled over REST, as the app's reactions guide says to.
    func heart() {
        restCall("toggle", "POST", "/api/rooms/\(roomId)/elements/\(seededElement())/reactions/toggle")
    }

    /// Every other write creates an element (`element:create` with an ack), the others drag one.
    func write() {
        let creates = nextWriteCreates
        nextWriteCreates.toggle()
        if creates { create() } else { drag() }
    }

    private func create() {
        guard let ws = socket else { return }
        let sent = now
        let record = driver.recorder.create(sent: sent, creator: index, room: room)
        let x = driver.random(below: 1000), y = driver.random(below: 1500)
        let id = ws.emitWithAck("[\"element:create\",{\"roomId\":\"\(roomId)\",\"type\":\"note\",\"content\":\"Note from user \(index)\","
                                + "\"positionX\":\(x),\"positionY\":\(y),\"width\":150,\"height\":150}]")
        pendingAcks[id] = (.create(record: record, room: room), sent)
    }

    /// A drag: `element:update` of the position every `dragInterval`, `dragUpdates` times (each
    /// with an ack), of this user's own element in the room or else a seeded one.
    private func drag() {
        let element = ownElement[room] ?? seededElement()
        let room = self.room, e = epoch
        for i in 0..<driver.mix.dragUpdates {
            driver.loop.scheduleTask(in: UInt64(i) * driver.mix.dragInterval) { [self] in
                guard e == epoch, isOnline, room == self.room, let ws = socket else { return }
                let x = driver.random(below: 1000), y = driver.random(below: 1500)
                let id = ws.emitWithAck("[\"element:update\",{\"roomId\":\"\(roomId)\",\"elementId\":\"\(element)\",\"positionX\":\(x),\"positionY\":\(y)}]")
                pendingAcks[id] = (.update, now)
            }
        }
    }

    func myRooms() { restCall("my-rooms", "GET", "/api/rooms/my-rooms") }

    func interactionState() {
        let posts = driver.seed.cohortPosts[index / CapacityLayout.cohortSize]
        restCall("interaction-state", "POST", "/api/mobile/posts/interaction-state",
                 body: "{\"postIds\":[\(posts.map { "\"\($0)\"" }.joined(separator: ","))]}")
    }

    /// Back to MyRooms and into the next of the user's rooms: `room:leave`, then `room:join`.
    func switchRoom() {
        guard let ws = socket else { return }
        let id = ws.emitWithAck("[\"room:leave\",{\"roomId\":\"\(roomId)\"}]")
        pendingAcks[id] = (.leave, now)
        slot = (slot + 1) % rooms.count
        join()
    }

    // MARK: what arrives

    private static let createdPrefix = Array("42[\"element:created\",".utf8)
    private static let createdGlobalPrefix = Array("42[\"element:created:global\",".utf8)
    private static let batchPrefix = Array("42[\"elements:batch\",".utf8)
    private static let idKey = Array("\"id\":".utf8)
    private static let elementIdKey = Array("\"elementId\":".utf8)
    private static let errorKey = Array("[{\"error\":".utf8)
    /// The app gives up on an `element:create` ack after 5 s and removes its optimistic element.
    private static let appCreateTimeout: UInt64 = 5_000_000_000

    func event(_ m: UnsafeRawBufferPointer) {
        driver.recorder.framesIn += 1
        if Bytes.hasPrefix(m, Self.createdPrefix) {
            if let h = Bytes.idHash(m, key: Self.idKey) { driver.recorder.delivery(h, user: index, roomEvent: true) }
        } else if Bytes.hasPrefix(m, Self.createdGlobalPrefix) {
            if let h = Bytes.idHash(m, key: Self.elementIdKey) { driver.recorder.delivery(h, user: index, roomEvent: false) }
        } else if Bytes.hasPrefix(m, Self.batchPrefix) {
            batchArrived()
        }
    }

    func ack(_ id: Int, _ m: UnsafeRawBufferPointer) {
        guard let (kind, sent) = pendingAcks.removeValue(forKey: id) else { return }
        let took = now &- sent
        let failed = Bytes.find(m, Self.errorKey) != nil
        let detail = failed ? String(decoding: m.prefix(200), as: UTF8.self) : ""
        switch kind {
        case .join:
            if failed { driver.recorder.error("room:join", detail) } else if joinUnanswered { driver.recorder.error("room:join", "ack without elements:batch") }
            driver.recorder.ack("room:join", took)
            joined()
        case .leave:
            driver.recorder.ack("room:leave", took, failure: failed ? detail : nil)
        case .update:
            driver.recorder.ack("element:update", took, failure: failed ? detail : nil)
        case .delete:
            driver.recorder.ack("element:delete", took, failure: failed ? detail : nil)
        case .create(let record, let room):
            driver.recorder.ack("element:create", took, failure: failed ? detail : nil)
            if took > Self.appCreateTimeout {
                driver.recorder.error("element:create", "acknowledged after \(took / 1_000_000) ms: past the app's 5 s timeout, it dropped the element")
            }
            guard !failed, let h = Bytes.idHash(m, key: Self.idKey), let newId = Self.uuid(after: Self.idKey, in: m) else { return }
            if let r = record { driver.recorder.acked(r, hash: h) }
            // One element of its own per room: the previous one goes, so rooms stay near their
            // seeded 100 elements however long the run.
            if let old = ownElement[room], let ws = socket {
                let id = ws.emitWithAck("[\"element:delete\",{\"roomId\":\"\(driver.seed.roomIds[room])\",\"elementId\":\"\(old)\"}]")
                pendingAcks[id] = (.delete, now)
            }
            ownElement[room] = newId
        }
    }

    /// The 36-character UUID string after `key`, or nil.
    static func uuid(after key: [UInt8], in m: UnsafeRawBufferPointer) -> String? {
        guard var at = Bytes.find(m, key) else { return nil }
        while at < m.count && m[at] == 32 { at += 1 }
        guard at + 37 <= m.count, m[at] == 34 else { return nil }
        return String(decoding: UnsafeRawBufferPointer(rebasing: m[(at + 1)..<(at + 37)]), as: UTF8.self)
    }
}
