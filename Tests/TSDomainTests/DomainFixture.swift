import Foundation
import Logging
import TSDomain
import TSJSON
import TSStorage
import XCTest

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

    /// `n` users (`user0`…), a room of all of them created by the first, and one note by the
    /// first in it.
    static func roomWithElement(_ domain: TouchSyncDomain, users n: Int) async throws -> (users: [PublicUser], room: String, element: String) {
        var users: [PublicUser] = []
        for i in 0..<n { users.append(try await domain.auth.createUser(username: "user\(i)", passwordHash: "x", firstName: nil, avatarUrl: nil)) }
        let room = try await domain.rooms.create(actor: users[0].id, input: Input(["memberIds": .array(users.map { .string($0.id) })]))
        let element = try await domain.elements.create(roomId: room.id, actor: users[0].id,
                                                       input: Input(["type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1]),
                                                       originSocketId: nil)
        return (users, room.id, element.id)
    }
}

/// A test over a fresh `DomainFixture` per test (closed after it), with the writer's statement
/// counter at hand: the base of the tests that count what a service costs.
class DomainTestCase: XCTestCase {
    var db: Database!
    var domain: TouchSyncDomain!

    override func setUp() async throws {
        (db, domain) = try DomainFixture.make()
    }

    override func tearDown() { db.close() }

    /// How many statements the writer connection ran during `body` (in-memory, reads run on it too).
    func executed(_ body: () async throws -> Void) async throws -> Int {
        let before = try db.withWriterConnection { $0.statementsExecuted }
        try await body()
        return try db.withWriterConnection { $0.statementsExecuted } - before
    }
}
