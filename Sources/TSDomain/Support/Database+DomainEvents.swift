import TSStorage

extension Database {
    /// A write whose committed result becomes a domain event: `event` builds it from what the
    /// transaction returned (so a payload such as a reaction count is the one this transaction
    /// wrote, never a later read), still inside the transaction, where it takes its room's next
    /// event number (`RoomEventNumbers`); `events` gets it on the writer thread, in commit order,
    /// before the caller resumes (docs/realtime.md "Order"). A rolled-back write publishes nothing
    /// and gives its number back.
    func write<T: Sendable>(publishing events: any DomainEventPublisher, _ event: @escaping @Sendable (T) -> DomainEvent?,
                            _ body: @escaping @Sendable (SQLConnection) throws -> T) async throws -> T {
        try await write({ c -> Published<T> in
            let value = try body(c)
            return Published(value: value, event: try event(value).map { try RoomEventNumbers.numbered(c, $0) })
        }, committed: { result in
            if let e = result.event { events.publish(e) }
        }).value
    }
}

/// A write's result and the numbered event it produced.
struct Published<T: Sendable>: Sendable {
    let value: T
    let event: DomainEvent?
}
