#if canImport(CPostgres)
import CPostgres
import TSSync  // the C library (strdup, malloc, free)

/// One PostgreSQL connection through libpq (https://www.postgresql.org/docs/15/libpq.html), the
/// PostgreSQL half of `SQLConnection`. Every call BLOCKS on the network, so a connection is only
/// ever used on a storage thread (the writer thread or a reader thread, or a thread that may block:
/// CLI, migrations, tests); event loops reach it through `Database.read`/`write` continuations.
///
/// - `?` placeholders are translated to `$1…$n` once per SQL text (`PostgresSQL.translate`) and the
///   statement is prepared once per connection as a named statement (`PQprepare`), then run with
///   `PQexecPrepared`. At most `statementCacheCapacity` are kept; past it a query runs unnamed
///   (`PQexecParams`), so the server-side cache is bounded too.
/// - Values are exchanged in text format (blobs in binary); `Row` parses them.
/// - Not Sendable: one thread at a time, like `SQLiteConnection`.
final class PostgresConnection {
    private(set) var handle: OpaquePointer
    /// The URL without its password (for messages and logs).
    let redactedURL: String
    let isReadOnly: Bool
    private let conninfo: String
    private let configuration: DatabaseConfiguration
    private var prepared: [String: Prepared] = [:]
    private var nextStatementNumber = 0
    private var savepointCounter = 0
    private var isClosed = false
    /// Rows affected by the most recent command (`PQcmdTuples`).
    private(set) var changes = 0
    /// A read snapshot's `BEGIN`, not sent yet: it travels with the read's first statement in one
    /// pipeline (PostgresConnection+Pipeline.swift).
    var pendingReadBegin: String?
    /// The open transaction is a read snapshot begun in a pipeline: its `COMMIT` is sent without
    /// waiting for the answer.
    var readSnapshotOpen = false
    /// A `COMMIT` sent and not answered yet; read before the connection's next command.
    var commitInFlight = false
    /// Counts this connection's waits for the server (`Database.postgresRoundTrips`); nil: not counted.
    var roundTrips: PostgresRoundTrips?
    /// Statements announced by `prefetch`, sent with the next statement that needs an answer.
    var prefetchQueue: [(sql: String, args: [SQLValue])] = []
    /// Their results, until the read asks for them (or its snapshot ends).
    var prefetched: [(sql: String, args: [SQLValue], result: OpaquePointer)] = []

    struct Prepared {
        /// The server-side statement name; nil when the cache was full (runs unnamed).
        var name: String?
        var translated: String
        var parameterCount: Int
    }

    /// Connects (blocking, bounded by `configuration.postgresConnectTimeout`). `readOnly` makes
    /// every transaction read-only (`default_transaction_read_only`), a guard for reader connections.
    init(url: String, readOnly: Bool, configuration: DatabaseConfiguration) throws {
        self.conninfo = url
        self.redactedURL = PostgresURL.redact(url)
        self.isReadOnly = readOnly
        self.configuration = configuration
        self.handle = try Self.connect(url: url, readOnly: readOnly, configuration: configuration)
    }

    deinit { close() }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        dropPrefetched()
        PQfinish(handle)
    }

    /// The libpq parameters besides the URL (https://www.postgresql.org/docs/15/libpq-connect.html#LIBPQ-PARAMKEYWORDS):
    /// connect_timeout, TCP keepalives (a dead peer is noticed in about a minute, not after the
    /// kernel's two hours) and the session settings: statement_timeout, UTC, read-only readers.
    static func connect(url: String, readOnly: Bool, configuration: DatabaseConfiguration) throws -> OpaquePointer {
        let timeoutSeconds = max(1, Int((configuration.postgresConnectTimeout.components.seconds)))
        var options = "-c statement_timeout=\(configuration.postgresStatementTimeout.wholeMilliseconds) -c TimeZone=UTC"
        if readOnly { options += " -c default_transaction_read_only=on" }
        let pairs: [(String, String)] = [
            ("dbname", url),  // expand_dbname = 1: a postgres:// URL (or key=value string) in dbname
            ("connect_timeout", String(timeoutSeconds)),
            ("keepalives", "1"), ("keepalives_idle", "30"), ("keepalives_interval", "10"), ("keepalives_count", "3"),
            ("application_name", "touchsync"), ("client_encoding", "UTF8"),
            ("options", options),
        ]
        var keys: [UnsafePointer<CChar>?] = pairs.map { UnsafePointer(strdup($0.0)) }
        var values: [UnsafePointer<CChar>?] = pairs.map { UnsafePointer(strdup($0.1)) }
        keys.append(nil)
        values.append(nil)
        defer {
            for p in keys { free(UnsafeMutableRawPointer(mutating: p)) }
            for p in values { free(UnsafeMutableRawPointer(mutating: p)) }
        }
        guard let conn = PQconnectdbParams(keys, values, 1) else {
            throw StorageError.postgres(sqlState: nil, message: "out of memory connecting to \(PostgresURL.redact(url))", connectionLost: true)
        }
        guard PQstatus(conn) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(conn)).trimmingTrailingWhitespace()
            PQfinish(conn)
            throw StorageError.postgres(sqlState: nil, message: "cannot connect to PostgreSQL at \(PostgresURL.redact(url)): \(message)",
                                        connectionLost: true)
        }
        // Notices (e.g. "relation already exists, skipping") would go to stderr otherwise.
        PQsetNoticeProcessor(conn, { _, _ in }, nil)
        return conn
    }

    /// False once libpq has noticed the connection is gone (or after `close`).
    var isConnected: Bool { !isClosed && PQstatus(handle) == CONNECTION_OK }

    /// Replaces a broken connection with a new one (the prepared statements go with the old session).
    func reconnect() throws {
        let fresh = try Self.connect(url: conninfo, readOnly: isReadOnly, configuration: configuration)
        if !isClosed { PQfinish(handle) }
        handle = fresh
        isClosed = false
        prepared.removeAll()
        pendingReadBegin = nil
        readSnapshotOpen = false
        commitInFlight = false
        dropPrefetched()
    }

    // MARK: - Executing SQL

    /// Runs one or more `;`-separated statements without parameters (simple query protocol).
    func executeScript(_ sql: String) throws {
        try settle()
        try sendPendingBegin()
        roundTrips?.add()
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        try check(result, sql: sql)
        changes = Self.affectedRows(result)
        // COMMIT of a transaction an earlier (swallowed) error aborted "succeeds" as ROLLBACK
        // (https://www.postgresql.org/docs/15/sql-commit.html): nothing was committed; say so.
        if sql == "COMMIT", let result, let tag = PQcmdStatus(result), String(cString: tag) == "ROLLBACK" {
            throw StorageError.postgres(sqlState: "25P02", message: "the transaction was aborted by an earlier error (caught and ignored inside it) and rolled back; nothing was committed", sql: sql)
        }
    }

    /// True when an error aborted the open transaction: every statement fails until a rollback.
    var isInFailedTransaction: Bool { PQtransactionStatus(handle) == PQTRANS_INERROR }

    /// Executes `sql` with `args` and returns the result (the caller `PQclear`s it).
    func execute(_ sql: String, _ args: [SQLValue]) throws -> OpaquePointer {
        try settle()
        if let result = takePrefetched(sql, args) { return try finish(result, sql: sql) }
        let statement = try preparedStatement(sql)
        guard args.count == statement.parameterCount else {
            throw StorageError.misuse("statement expects \(statement.parameterCount) arguments, got \(args.count)", sql: sql)
        }
        let result: OpaquePointer?
        if pendingReadBegin != nil || !prefetchQueue.isEmpty {
            // With the read's BEGIN and the statements announced by `prefetch`: one round trip.
            result = try pipelined(sql, args, statement)
        } else {
            roundTrips?.add()
            result = Self.withParameters(args) { n, values, lengths, formats in
                if let name = statement.name { return PQexecPrepared(handle, name, n, values, lengths, formats, 0) }
                return PQexecParams(handle, statement.translated, n, nil, values, lengths, formats, 0)
            }
        }
        return try finish(result, sql: sql)
    }

    /// Checks a statement's result (clearing it when it failed) and records its row count.
    private func finish(_ result: OpaquePointer?, sql: String) throws -> OpaquePointer {
        do {
            try check(result, sql: sql)
        } catch {
            PQclear(result)
            throw error
        }
        changes = Self.affectedRows(result)
        return result!
    }

    /// Sends `statement` with `args` in the pipeline being built (`PostgresConnection+Pipeline.swift`).
    func send(_ statement: Prepared, _ args: [SQLValue]) -> Bool {
        Self.withParameters(args) { n, values, lengths, formats in
            if let name = statement.name { return PQsendQueryPrepared(handle, name, n, values, lengths, formats, 0) }
            return PQsendQueryParams(handle, statement.translated, n, nil, values, lengths, formats, 0)
        } == 1
    }

    /// Calls `body` with `args` as libpq's parameter arrays (text format, blobs binary), valid
    /// during the call only (libpq copies them into its output buffer when it sends).
    static func withParameters<R>(_ args: [SQLValue],
                                  _ body: (Int32, [UnsafePointer<CChar>?], [Int32], [Int32]) -> R) -> R {
        let n = args.count
        var values = [UnsafePointer<CChar>?](repeating: nil, count: n)
        var lengths = [Int32](repeating: 0, count: n)
        var formats = [Int32](repeating: 0, count: n)
        var owned: [UnsafeMutableRawPointer] = []
        owned.reserveCapacity(n)
        defer { for p in owned { free(p) } }
        for (i, arg) in args.enumerated() {
            let text: String
            switch arg {
            case .null: continue
            case .int(let v): text = String(v)
            case .double(let v): text = Self.format(v)
            case .text(let s): text = s
            case .blob(let bytes):
                // Binary format (https://www.postgresql.org/docs/15/libpq-exec.html#LIBPQ-PQEXECPARAMS): raw bytes.
                let p = malloc(max(1, bytes.count))!
                bytes.withUnsafeBytes { raw in if let base = raw.baseAddress { p.copyMemory(from: base, byteCount: raw.count) } }
                owned.append(p)
                values[i] = UnsafePointer(p.assumingMemoryBound(to: CChar.self))
                lengths[i] = Int32(clamping: bytes.count)
                formats[i] = 1
                continue
            }
            let p = strdup(text)!
            owned.append(UnsafeMutableRawPointer(p))
            values[i] = UnsafePointer(p)
        }
        return body(Int32(n), values, lengths, formats)
    }

    /// Doubles as PostgreSQL reads them back exactly (Swift's shortest round-trip form; `inf`/`nan` spelled PG's way).
    static func format(_ v: Double) -> String {
        if v.isNaN { return "NaN" }
        if v.isInfinite { return v < 0 ? "-Infinity" : "Infinity" }
        return String(v)
    }

    func preparedStatement(_ sql: String) throws -> Prepared {
        if let cached = prepared[sql] { return cached }
        let (translated, count) = PostgresSQL.translate(sql)
        guard prepared.count < max(1, configuration.statementCacheCapacity) else {
            return Prepared(name: nil, translated: translated, parameterCount: count)
        }
        nextStatementNumber += 1
        let name = "ts\(nextStatementNumber)"
        roundTrips?.add()
        let result = PQprepare(handle, name, translated, Int32(count), nil)
        defer { PQclear(result) }
        try check(result, sql: sql)
        let entry = Prepared(name: name, translated: translated, parameterCount: count)
        prepared[sql] = entry
        return entry
    }

    var cachedStatementCount: Int { prepared.count }

    private static func affectedRows(_ result: OpaquePointer?) -> Int {
        guard let result, let p = PQcmdTuples(result), p.pointee != 0 else { return 0 }
        return Int(String(cString: p)) ?? 0
    }

    /// Throws the server's error (with its SQLSTATE) unless `result` succeeded.
    func check(_ result: OpaquePointer?, sql: String?) throws {
        if let result {
            let status = PQresultStatus(result)
            if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY { return }
            let sqlState = PQresultErrorField(result, ts_pq_diag_sqlstate()).map { String(cString: $0) }
            let primary = PQresultErrorField(result, ts_pq_diag_message_primary()).map { String(cString: $0) }
            let message = primary ?? String(cString: PQresultErrorMessage(result)).trimmingTrailingWhitespace()
            throw StorageError.postgres(sqlState: sqlState, message: message, sql: sql, connectionLost: PQstatus(handle) != CONNECTION_OK)
        }
        let message = String(cString: PQerrorMessage(handle)).trimmingTrailingWhitespace()
        throw StorageError.postgres(sqlState: nil, message: message.isEmpty ? "no result from the server" : message, sql: sql,
                                    connectionLost: PQstatus(handle) != CONNECTION_OK)
    }

    /// True while a transaction is open, including one aborted by an error (`PQtransactionStatus`).
    var isInTransaction: Bool {
        if pendingReadBegin != nil { return true }
        try? settle()
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    // MARK: - Transactions

    func nextSavepointName() -> String {
        savepointCounter += 1
        return "ts_sp\(savepointCounter)"
    }
}

extension String {
    /// libpq's messages end in a newline and continue on tab-indented lines: one line for logs.
    func trimmingTrailingWhitespace() -> String {
        var s = Substring(self)
        while let last = s.last, last.isWhitespace { s = s.dropLast() }
        return s.split(whereSeparator: { $0 == "\n" || $0 == "\t" }).joined(separator: " ")
    }
}
#endif

/// PostgreSQL's catalog type OIDs for the types `Row` parses (src/include/catalog/pg_type.dat;
/// stable across releases since they are part of the wire protocol's type identification).
enum PostgresTypeOID {
    static let bool: UInt32 = 16
    static let bytea: UInt32 = 17
    static let int8: UInt32 = 20
    static let int2: UInt32 = 21
    static let int4: UInt32 = 23
    static let oid: UInt32 = 26
    static let float4: UInt32 = 700
    static let float8: UInt32 = 701
    static let numeric: UInt32 = 1700
}
