import CSQLite

/// A storage failure: the extended result code (https://sqlite.org/rescode.html), the engine's
/// message, and the SQL that failed (for logs; never send it to clients). A PostgreSQL failure also
/// carries its SQLSTATE (https://www.postgresql.org/docs/15/errcodes-appendix.html) and `code` is the
/// SQLite code of the same meaning (unique/foreign-key/not-null/check violations; else SQLITE_ERROR),
/// so callers checking `isUniqueViolation` & co. work on both backends.
public struct StorageError: Error, CustomStringConvertible, Sendable {
    /// Extended result code (extended codes are enabled on every connection).
    public var code: Int32
    public var message: String
    public var sql: String?
    /// PostgreSQL's SQLSTATE (five characters); nil for SQLite and for client-side failures.
    public var sqlState: String?
    /// PostgreSQL only: the connection to the server was lost (or never made) during this call.
    public var isConnectionLost: Bool = false

    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// A PostgreSQL error with its SQLSTATE, mapped onto the SQLite code of the same meaning.
    static func postgres(sqlState: String?, message: String, sql: String? = nil, connectionLost: Bool = false) -> StorageError {
        let code: Int32
        switch sqlState {
        case "23505": code = constraintUnique
        case "23503": code = constraintForeignKey
        case "23502": code = constraintNotNull
        case "23514": code = constraintCheck
        case .some(let s) where s.hasPrefix("23"): code = SQLITE_CONSTRAINT
        case "40001", "40P01", "55P03": code = SQLITE_BUSY
        default: code = SQLITE_ERROR
        }
        var error = StorageError(code: code, message: message, sql: sql)
        error.sqlState = sqlState
        error.isConnectionLost = connectionLost
        return error
    }

    /// PostgreSQL's serialization failure (40001) or deadlock (40P01): another transaction (maybe on
    /// another node) conflicted; running the same work again is expected to succeed.
    public var isSerializationFailure: Bool { sqlState == "40001" || sqlState == "40P01" }

    // Extended result codes are C macro expressions Swift does not import
    // (https://sqlite.org/rescode.html#extrc): SQLITE_CONSTRAINT | (n << 8).
    public static let constraintCheck: Int32 = SQLITE_CONSTRAINT | (1 << 8)
    public static let constraintForeignKey: Int32 = SQLITE_CONSTRAINT | (3 << 8)
    public static let constraintNotNull: Int32 = SQLITE_CONSTRAINT | (5 << 8)
    public static let constraintPrimaryKey: Int32 = SQLITE_CONSTRAINT | (6 << 8)
    public static let constraintUnique: Int32 = SQLITE_CONSTRAINT | (8 << 8)

    /// The primary result code (low 8 bits), e.g. SQLITE_CONSTRAINT for SQLITE_CONSTRAINT_UNIQUE.
    public var primaryCode: Int32 { code & 0xff }

    /// Any constraint failure: UNIQUE, PRIMARY KEY, FOREIGN KEY, NOT NULL, CHECK.
    public var isConstraintViolation: Bool { primaryCode == SQLITE_CONSTRAINT }
    /// A UNIQUE or PRIMARY KEY conflict (map to 409 / "already exists").
    public var isUniqueViolation: Bool { code == Self.constraintUnique || code == Self.constraintPrimaryKey }
    public var isForeignKeyViolation: Bool { code == Self.constraintForeignKey }
    /// The database was locked beyond the busy timeout.
    public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }

    public var description: String {
        if sqlState != nil || isConnectionLost {
            var s = "PostgreSQL error\(sqlState.map { " SQLSTATE \($0)" } ?? "")\(isConnectionLost ? " (connection lost)" : ""): \(message)"
            if let sql { s += " — SQL: \(sql)" }
            return s
        }
        var s = "SQLite error \(code) (\(String(cString: sqlite3_errstr(code)))): \(message)"
        if let sql { s += " — SQL: \(sql)" }
        return s
    }

    /// The error for result code `rc` on connection `db`, with SQLite's message.
    static func from(_ db: OpaquePointer?, _ rc: Int32, sql: String?) -> StorageError {
        let message: String
        if let db, let p = sqlite3_errmsg(db) {
            message = String(cString: p)
        } else {
            message = String(cString: sqlite3_errstr(rc))
        }
        // With extended result codes on, sqlite3_extended_errcode refines a primary `rc`.
        var code = rc
        if let db, rc == (rc & 0xff) {
            let ext = sqlite3_extended_errcode(db)
            if ext & 0xff == rc { code = ext }
        }
        return StorageError(code: code, message: message, sql: sql)
    }

    /// Used for API misuse detected by this layer (e.g. wrong argument count, closed database).
    static func misuse(_ message: String, sql: String? = nil) -> StorageError {
        StorageError(code: SQLITE_MISUSE, message: message, sql: sql)
    }
}
