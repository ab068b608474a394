import Foundation
import TSStorage
import XCTest

/// The two storage backends, for tests that run once per backend.
public enum StorageBackend: String, CaseIterable, Sendable {
    case sqlite
    case postgres
}

/// A throw-away PostgreSQL database for one test: `CREATE DATABASE ts_<random>` on the server of
/// `TOUCHSYNC_TEST_POSTGRES_URL` (scripts/services.sh starts one; `scripts/test` exports it), and
/// `DROP DATABASE … WITH (FORCE)` afterwards.
public final class PostgresTestDatabase: Sendable {
    /// `postgres://…/ts_<random>`: give it to `Database(url:)`, `TouchSyncServer` (`database.url`) or a child process.
    public let url: String
    public let name: String
    private let serverURL: String

    /// The environment variable naming the test server.
    public static let environmentVariable = "TOUCHSYNC_TEST_POSTGRES_URL"

    /// The test server's URL, or `XCTSkip` with the reason (never a silent pass).
    public static func serverURL(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        guard PostgresAdmin.isSupported else {
            throw XCTSkip("PostgreSQL variant skipped: this build has no PostgreSQL support (libpq is linked on Linux only)")
        }
        guard let url = environment[environmentVariable], !url.isEmpty else {
            let why = environment["TOUCHSYNC_TEST_SERVICES_SKIPPED"].map { ": \($0)" } ?? ""
            throw XCTSkip("PostgreSQL variant skipped: \(environmentVariable) is not set (run ./scripts/test, or "
                          + "`scripts/services.sh start DIR && . DIR/env`)\(why)")
        }
        return url
    }

    /// Creates a fresh, empty database (no migrations applied). Throws `XCTSkip` without a server.
    public init() throws {
        serverURL = try Self.serverURL()
        let random = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        name = "ts_\(random)"
        url = PostgresURL.replacingDatabase(in: serverURL, with: name)
        try PostgresAdmin.execute(url: serverURL, "CREATE DATABASE \(name)")
    }

    /// Drops the database, closing whatever connections are still open to it (idempotent).
    public func drop() {
        try? PostgresAdmin.execute(url: serverURL, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
}

extension XCTestCase {
    /// A fresh PostgreSQL database URL, dropped when the test ends; `XCTSkip` (visible) without a server.
    public func makePostgresDatabaseURL() throws -> String {
        let database = try PostgresTestDatabase()
        addTeardownBlock { database.drop() }
        return database.url
    }

    /// An open `Database` on a fresh, empty database of `backend` (SQLite: a file in a temporary
    /// directory; PostgreSQL: `makePostgresDatabaseURL()`), closed and removed when the test ends.
    /// Apply migrations yourself if the test needs the schema (e.g. `EmbeddedMigrations.migrator().migrate(db)`).
    public func makeDatabase(_ backend: StorageBackend, configuration: DatabaseConfiguration = .init()) throws -> Database {
        let db: Database
        switch backend {
        case .sqlite:
            let dir = NSTemporaryDirectory() + "ts-test-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
            db = try Database(path: dir + "/test.sqlite", configuration: configuration)
        case .postgres:
            db = try Database(url: try makePostgresDatabaseURL(), configuration: configuration)
        }
        // Teardown blocks run last-registered first: the database closes before it is dropped.
        addTeardownBlock { db.close() }
        return db
    }
}
