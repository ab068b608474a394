import CSQLite

/// A prepared statement (https://sqlite.org/c3ref/stmt.html). Obtained from
/// `SQLiteConnection.prepare`, which caches statements by SQL text; like its connection it is
/// used by one thread at a time.
public final class Statement {
    let handle: OpaquePointer
    public let sql: String
    /// Set while a `run`/`rows`/`first` call is stepping this statement, so that a nested use
    /// of the same SQL text (e.g. inside a `rows` closure) gets a fresh statement instead of
    /// resetting the one being iterated.
    var inUse = false
    /// Set when `SQLiteConnection.prepare` hands it out (its caller may step it and not reset
    /// it); the connection's own runs reset it first then.
    var handedOut = false

    /// The text arguments of the current run, side by side, bound without a copy
    /// (`SQLITE_STATIC`, https://sqlite.org/c3ref/bind_blob.html): SQLite otherwise copies each
    /// text into its own allocation and frees it at the reset (interaction-state binds 50 ids).
    /// Allocated once, `textArenaCapacity` bytes; a run whose texts do not fit binds them as copies.
    /// Its bytes stay unchanged while they are bound: a run rebinds every parameter, and the
    /// bindings are cleared at each reset.
    private var textArena: UnsafeMutablePointer<UInt8>?
    static let textArenaCapacity = 4096

    init(handle: OpaquePointer, sql: String) {
        self.handle = handle
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
        textArena?.deallocate()
    }

    /// Number of `?` / named parameters.
    public var parameterCount: Int32 { sqlite3_bind_parameter_count(handle) }
    public var columnCount: Int32 { sqlite3_column_count(handle) }
    /// True for statements that cannot change the database (https://sqlite.org/c3ref/stmt_readonly.html).
    public var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    /// Binds `args` to parameters 1…n. The count must match the statement's parameters.
    public func bind(_ args: [SQLValue]) throws {
        guard args.count == Int(parameterCount) else {
            throw StorageError(code: SQLITE_RANGE, message: "statement expects \(parameterCount) arguments, got \(args.count)", sql: sql)
        }
        var textBytes = 0
        for case .text(let t) in args { textBytes += t.utf8.count }
        guard textBytes > 0, textBytes <= Self.textArenaCapacity else {
            for (i, arg) in args.enumerated() { try bind(arg, at: Int32(i + 1)) }
            return
        }
        let arena = textArena ?? UnsafeMutablePointer<UInt8>.allocate(capacity: Self.textArenaCapacity)
        textArena = arena
        var at = 0
        for (i, arg) in args.enumerated() {
            guard case .text(var t) = arg else {
                try bind(arg, at: Int32(i + 1))
                continue
            }
            let n = t.withUTF8 { utf8 -> Int in
                if let from = utf8.baseAddress { (arena + at).update(from: from, count: utf8.count) }
                return utf8.count
            }
            let rc = (arena + at).withMemoryRebound(to: CChar.self, capacity: max(n, 1)) {
                ts_sqlite3_bind_text_static(handle, Int32(i + 1), $0, Int32(n))
            }
            guard rc == SQLITE_OK else { throw StorageError.from(sqlite3_db_handle(handle), rc, sql: sql) }
            at += n
        }
    }

    /// Binds `args` to parameters 1…n, its slices as texts pointing into `buffer` (its bytes),
    /// which must stay as they are until the next reset.
    func bind(_ args: SQLTextSlices, in buffer: UnsafeBufferPointer<UInt8>) throws {
        guard args.count == Int(parameterCount) else {
            throw StorageError(code: SQLITE_RANGE, message: "statement expects \(parameterCount) arguments, got \(args.count)", sql: sql)
        }
        var index: Int32 = 1
        if let base = buffer.baseAddress {
            for r in args.ranges {
                let rc = (base + r.lowerBound).withMemoryRebound(to: CChar.self, capacity: max(r.count, 1)) {
                    ts_sqlite3_bind_text_static(handle, index, $0, Int32(r.count))
                }
                guard rc == SQLITE_OK else { throw StorageError.from(sqlite3_db_handle(handle), rc, sql: sql) }
                index += 1
            }
        } else {
            // An empty buffer: every slice is the empty text.
            for _ in args.ranges { try bind(.text(""), at: index); index += 1 }
        }
        for _ in 0..<args.nulls { try bind(.null, at: index); index += 1 }
        for value in args.rest { try bind(value, at: index); index += 1 }
    }

    /// Binds one value at a 1-based parameter index.
    public func bind(_ value: SQLValue, at index: Int32) throws {
        let rc: Int32
        switch value {
        case .null:
            rc = sqlite3_bind_null(handle, index)
        case .int(let v):
            rc = sqlite3_bind_int64(handle, index, v)
        case .double(let v):
            rc = sqlite3_bind_double(handle, index, v)
        case .text(let s):
            var s = s
            rc = s.withUTF8 { buf in
                buf.withMemoryRebound(to: CChar.self) { chars in
                    ts_sqlite3_bind_text_transient(handle, index, chars.baseAddress, Int32(chars.count))
                }
            }
        case .blob(let bytes):
            rc = bytes.withUnsafeBytes { raw in
                ts_sqlite3_bind_blob_transient(handle, index, raw.baseAddress, Int32(raw.count))
            }
        }
        guard rc == SQLITE_OK else { throw StorageError.from(sqlite3_db_handle(handle), rc, sql: sql) }
    }

    /// Advances one step. Returns true when a row is available (read it with `row`), false when done.
    public func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw StorageError.from(sqlite3_db_handle(handle), rc, sql: sql)
        }
    }

    /// The current row. Valid only until the next `step`/`reset`.
    public var row: Row { .sqlite(SQLiteRow(handle: handle)) }

    /// Resets for re-execution and clears bindings (releasing their copies).
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Column name at a 0-based index.
    public func columnName(_ index: Int32) -> String {
        guard let p = sqlite3_column_name(handle, index) else { return "" }
        return String(cString: p)
    }
}
