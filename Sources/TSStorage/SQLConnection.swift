/// The connection type every layer above storage is written against: the domain's queries take an
/// `SQLConnection` and never name a backend. Today it is the SQLite connection; the PostgreSQL
/// backend (issue 12) turns this into the backend-neutral connection (same `run`/`rows`/`first`/
/// `scalar*`/`transaction`/`savepoint` surface, plus `dialect`).
public typealias SQLConnection = SQLiteConnection

/// The SQL dialect a connection speaks. Queries are written in the subset both engines share
/// (`?` parameters, `ON CONFLICT … DO NOTHING`, `RETURNING`, no `rowid`); the few statements
/// that differ (row locks: `SELECT … FOR UPDATE` exists only on PostgreSQL) branch on this.
public enum SQLDialect: Sendable, Equatable {
    case sqlite
    case postgres
}

extension SQLiteConnection {
    public var dialect: SQLDialect { .sqlite }
}
