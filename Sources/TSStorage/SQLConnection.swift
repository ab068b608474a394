/// The connection type every layer above storage is written against: the domain's queries take an
/// `SQLConnection` and never name a backend. Today it is the SQLite connection; the PostgreSQL
/// backend (issue 12) turns this into the backend-neutral connection (same `run`/`rows`/`first`/
/// `scalar*`/`transaction`/`savepoint` surface).
public typealias SQLConnection = SQLiteConnection
