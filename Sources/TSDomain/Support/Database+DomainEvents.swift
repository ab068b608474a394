import TSStorage

extension Database {
    /// A write whose committed result becomes a domain event: `event` builds it from what the
    /// transaction returned (so a payload such as a reaction count is the one this transaction
    /// wrote, never a later read) and `events` gets it on the writer thread, in commit order,
    /// before the caller resumes (docs/realtime.md "Order"). A rolled-back write publishes nothing.
    func write<T: Sendable>(publishing events: any DomainEventPublisher, _ event: @escaping @Sendable (T) -> DomainEvent?,
                            _ body: @escaping @Sendable (SQLConnection) throws -> T) async throws -> T {
        try await write(body, committed: { value in
            if let e = event(value) { events.publish(e) }
        })
    }
}
