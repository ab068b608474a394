import TSStorage

extension Database {
    /// A write whose committed result becomes a domain event about `roomId`. The transaction first
    /// takes the room's next event number (`RoomEventNumbers`), which locks the room's row until
    /// COMMIT, then runs `body`; `event` builds the event from what the transaction returned (so a
    /// payload such as a reaction count is the one this transaction wrote, never a later read);
    /// `events` gets it on the writer thread, in commit order, before the caller resumes
    /// (docs/realtime.md "Order"). A rolled-back write publishes nothing and gives its number back.
    ///
    /// The number first, not last: every write of a room then locks the room's row before the
    /// rows of its elements, in one order, so two of them on different nodes cannot deadlock (a
    /// clear deletes elements that a toggle or an element delete has locked), and a clear's
    /// `DELETE` sees every element whose create is numbered before it.
    func write<T: Sendable>(publishing events: any DomainEventPublisher, room roomId: String,
                            _ event: @escaping @Sendable (T) -> DomainEvent,
                            _ body: @escaping @Sendable (SQLConnection) throws -> T) async throws -> T {
        try await write({ c -> Published<T> in
            let seq = try RoomEventNumbers.take(c, roomId: roomId)
            let value = try body(c)
            var e = event(value)
            e.seq = e.roomId == roomId ? seq : nil
            return Published(value: value, event: e)
        }, committed: { result in
            events.publish(result.event)
        }).value
    }
}

/// A write's result and the numbered event it produced.
struct Published<T: Sendable>: Sendable {
    let value: T
    let event: DomainEvent
}
