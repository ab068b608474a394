import Foundation
import Logging
import TSDomain
import TSStorage

/// A migrated in-memory database and the domain over it. In-memory, reads run on the writer
/// connection, so one statement cache and counter see every query.
enum DomainFixture {
    static var migrationsDirectory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Migrations").path
    }

    static func make(events: any DomainEventPublisher = RecordingEventPublisher()) throws -> (Database, TouchSyncDomain) {
        let db = try Database(path: ":memory:", logger: Logger(label: "test"))
        try Migrator(directory: migrationsDirectory).migrate(db)
        let domain = TouchSyncDomain(db: db, configuration: DomainConfiguration(jwtSecret: Array("0123456789abcdef0123".utf8), passwordIterations: 1000),
                                     events: events, logger: Logger(label: "test"))
        return (db, domain)
    }
}
