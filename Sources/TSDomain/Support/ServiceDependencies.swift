import TSStorage

/// What the services that write a room's elements are built on (`ElementService`,
/// `ReactionService`): one database, one clock, one creation order of new rows, the seam each
/// committed change is published to, and the notification worker a write wakes when it queued a
/// push. `TouchSyncDomain` makes one value and hands it to each, so they cannot drift apart.
struct ServiceDependencies: Sendable {
    let db: Database
    let clock: any WallClock
    let sequence: SequenceSource
    let events: any DomainEventPublisher
    let notifier: NotificationWorker
}
