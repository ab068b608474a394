import Foundation

/// Where a `TouchSyncEvents` starts reading the server's event log.
public enum EventCursor: Sendable, Hashable {
    /// Only events emitted after the call that opened the sequence.
    case now
    /// Every event still in the log.
    case beginning
    /// Events with a sequence number greater than this (e.g. `LoadedFixtures.lastEventSequence`).
    case after(Int64)
}

extension TouchSyncBackend {
    /// The realtime events the server emits from `start` on, read from the test-mode event log
    /// (`GET /api/test/events`) by long-polling: each read waits on the server until an event
    /// arrives (at most 30 s per request), so no socket is needed and nothing polls in a loop.
    ///
    /// Iterate it (`for try await event in events`) or take the next event of one name:
    ///
    /// ```swift
    /// let events = try await backend.events(from: .now)
    /// _ = try await bob.reactions.toggle(room: room.id, element: photo.id)
    /// let added = try await events.next("element:reaction:added", where: { $0.payload["elementId"]?.string == photo.id })
    /// ```
    public func events(from start: EventCursor = .now) async throws -> TouchSyncEvents {
        let cursor: Int64
        switch start {
        case .beginning: cursor = 0
        case .after(let seq): cursor = seq
        case .now: cursor = try await eventPage(since: Int64.max, limit: 1, wait: 0).lastSequence
        }
        return TouchSyncEvents(reader: EventReader(backend: self, cursor: cursor))
    }

    /// One read of the event log: events after `since`, waiting up to `wait` seconds on the server
    /// (0 to 30) while there are none.
    public func eventPage(since: Int64, limit: Int = 1000, event: String? = nil, roomId: String? = nil,
                          wait: TimeInterval = 0) async throws -> RealtimeEventPage {
        var query = [("since", String(since)), ("limit", String(limit))]
        if let event { query.append(("event", event)) }
        if let roomId { query.append(("roomId", roomId)) }
        let waitMs = Int((min(max(wait, 0), TouchSyncEvents.maxServerWait) * 1000).rounded(.up))
        if waitMs > 0 { query.append(("wait", "\(waitMs)ms")) }
        return try await transport.send(.get, "/api/test/events", query: query, timeout: Double(waitMs) / 1000 + 30)
            .decodeData(RealtimeEventPage.self, route: "GET /api/test/events")
    }
}

/// The server's realtime events from a cursor on, oldest first: an `AsyncSequence` whose
/// iteration never ends by itself (it waits for the next event), and `next(_:where:timeout:)`
/// for a test that awaits one event.
public struct TouchSyncEvents: AsyncSequence, Sendable {
    public typealias Element = RealtimeEvent

    /// The longest wait one request asks of the server (its `?wait=` bound).
    public static let maxServerWait: TimeInterval = 30

    let reader: EventReader

    /// Waits until an event named `name` for which `predicate` holds arrives (or has arrived
    /// since the cursor and was not taken yet), and takes it. Other events stay for later calls,
    /// so the order of two awaits does not have to match the order of the events.
    ///
    /// - Throws: `TouchSyncError.eventTimeout` after `timeout` seconds, naming the event awaited and
    ///   listing the events that did arrive.
    public func next(_ name: String, where predicate: @escaping @Sendable (RealtimeEvent) -> Bool = { _ in true },
                     timeout: TimeInterval = 10) async throws -> RealtimeEvent {
        try await reader.take(name: name, predicate: predicate, timeout: timeout)
    }

    /// Waits for the next event of the payload type's name (`T.event`) whose decoded payload
    /// satisfies `predicate`, takes it, and returns its payload:
    ///
    /// ```swift
    /// let added = try await events.next(ReactionAddedEvent.self, where: { $0.elementId == photo.id })
    /// XCTAssertEqual(added.stats.totalReactions, 2)
    /// ```
    ///
    /// - Throws: `TouchSyncError.eventTimeout` as `next(_:where:timeout:)`; a `DecodingError` naming
    ///   the field when an event of that name arrives whose payload is not a `T` (the server's
    ///   payload and the kit's model disagree: the event is taken, not skipped).
    public func next<T: TouchSyncEventPayload>(_ type: T.Type, where predicate: @escaping @Sendable (T) -> Bool = { _ in true },
                                               timeout: TimeInterval = 10) async throws -> T {
        let event = try await reader.take(name: T.event, predicate: { event in
            guard let payload = try? event.payload.decode(T.self) else { return true }  // taken, and decoded again below to throw
            return predicate(payload)
        }, timeout: timeout)
        return try event.payload.decode(T.self)
    }

    /// The events received so far and not taken, oldest first (what a timeout would list).
    public var pending: [RealtimeEvent] { get async { await reader.buffered } }

    /// An iterator that takes the oldest event not taken yet, waiting for one when there is none.
    public func makeAsyncIterator() -> Iterator { Iterator(reader: reader) }

    public struct Iterator: AsyncIteratorProtocol {
        let reader: EventReader

        /// The oldest event not taken yet, waiting for one when there is none.
        public mutating func next() async throws -> RealtimeEvent? {
            try await reader.takeOldest()
        }
    }
}

/// The cursor and the events read but not yet taken. An actor: one read of the log at a time.
actor EventReader {
    let backend: TouchSyncBackend
    private var cursor: Int64
    private(set) var buffered: [RealtimeEvent] = []
    /// Bound on `buffered`: past it the oldest untaken events are dropped (a test that never
    /// takes what it reads must not grow without end).
    static let maxBuffered = 10_000

    init(backend: TouchSyncBackend, cursor: Int64) {
        self.backend = backend
        self.cursor = cursor
    }

    func take(name: String, predicate: @Sendable (RealtimeEvent) -> Bool, timeout: TimeInterval) async throws -> RealtimeEvent {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let i = buffered.firstIndex(where: { $0.event == name && predicate($0) }) {
                return buffered.remove(at: i)
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else {
                throw TouchSyncError.eventTimeout(EventTimeout(awaited: name, timeout: timeout, arrived: buffered))
            }
            try await read(wait: remaining)
        }
    }

    func takeOldest() async throws -> RealtimeEvent? {
        while buffered.isEmpty {
            try Task.checkCancellation()
            try await read(wait: TouchSyncEvents.maxServerWait)
        }
        return buffered.removeFirst()
    }

    /// One long-poll: appends what arrived after the cursor and moves the cursor past it.
    private func read(wait: TimeInterval) async throws {
        let page = try await backend.eventPage(since: cursor, limit: 1000, wait: wait)
        buffered.append(contentsOf: page.events)
        if buffered.count > Self.maxBuffered { buffered.removeFirst(buffered.count - Self.maxBuffered) }
        cursor = max(cursor, page.events.last?.seq ?? cursor)
    }
}
