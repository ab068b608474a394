#if canImport(CPostgres)
import CPostgres

/// PostgreSQL under `SQLConnection`: every statement is a prepared statement whose result rows
/// are mapped while the `PGresult` is alive, then cleared; transactions are `BEGIN`/`COMMIT`
/// and nest as named savepoints.
extension PostgresConnection: SQLBackend {
    var dialect: SQLDialect { .postgres }

    /// libpq marks a connection whose socket broke (`PQstatus` is `CONNECTION_BAD`): connect anew.
    func reconnectIfBroken() throws {
        if !isConnected { try reconnect() }
    }

    /// A read snapshot's `BEGIN` waits to travel with the read's first statement, and its
    /// `COMMIT` is sent without waiting (PostgresConnection+Pipeline.swift); every other
    /// statement runs at once.
    func executeControl(_ sql: String) throws {
        try settle()
        let ends = sql == "COMMIT" || sql == "ROLLBACK"
        if ends { dropPrefetched() }
        if sql == SQLDialect.postgres.statements.beginReadSnapshot && !isInTransaction {
            pendingReadBegin = sql
        } else if ends && pendingReadBegin != nil {
            pendingReadBegin = nil  // no statement ran: nothing was begun
        } else if sql == "COMMIT" && readSnapshotOpen {
            readSnapshotOpen = false
            try sendCommitWithoutWaiting()
        } else {
            if ends { readSnapshotOpen = false }
            try executeScript(sql)
        }
    }

    func run(_ sql: String, _ args: [SQLValue]) throws -> Int {
        let result = try execute(sql, args)
        PQclear(result)
        return changes
    }

    func rows<T>(_ sql: String, _ args: [SQLValue], _ map: (Row) throws -> T) throws -> [T] {
        let result = try execute(sql, args)
        defer { PQclear(result) }
        let n = PQntuples(result)
        var out: [T] = []
        out.reserveCapacity(Int(n))
        for r in 0..<n { out.append(try map(.postgres(PostgresRow(result: result, row: r)))) }
        return out
    }

    func forEachRow(_ sql: String, _ args: [SQLValue], _ body: (Row) throws -> Void) throws {
        let result = try execute(sql, args)
        defer { PQclear(result) }
        let n = PQntuples(result)
        var i: Int32 = 0
        while i < n {
            try body(.postgres(PostgresRow(result: result, row: i)))
            i += 1
        }
    }

    func first<T>(_ sql: String, _ args: [SQLValue], _ map: (Row) throws -> T) throws -> T? {
        let result = try execute(sql, args)
        defer { PQclear(result) }
        guard PQntuples(result) > 0 else { return nil }
        return try map(.postgres(PostgresRow(result: result, row: 0)))
    }

    /// `BEGIN` … `COMMIT`, or `ROLLBACK` when `body` (or the commit) throws; inside an open
    /// transaction, a savepoint instead.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        if isInTransaction { return try savepoint(body) }
        return try enclosed(begin: "BEGIN", end: "COMMIT", undo: { if isInTransaction { try? executeScript("ROLLBACK") } }, body)
    }

    /// `SAVEPOINT` … `RELEASE`; on throw, `ROLLBACK TO` (which also clears the aborted state an
    /// error leaves behind) and `RELEASE`, then rethrows.
    func savepoint<T>(_ body: () throws -> T) throws -> T {
        let name = nextSavepointName()
        return try enclosed(begin: "SAVEPOINT \(name)", end: "RELEASE \(name)", undo: {
            try? executeScript("ROLLBACK TO \(name)")
            try? executeScript("RELEASE \(name)")
        }, body)
    }

    /// `begin`, `body`, then `end`; when `body` or `end` throws, `undo` runs and the error is
    /// rethrown. A failed `begin` throws before `body` runs.
    private func enclosed<T>(begin: String, end: String, undo: () -> Void, _ body: () throws -> T) throws -> T {
        try executeScript(begin)
        do {
            let result = try body()
            try executeScript(end)
            return result
        } catch {
            undo()
            throw error
        }
    }
}

extension SQLConnection {
    /// Wraps an open PostgreSQL connection.
    convenience init(postgres: PostgresConnection) { self.init(backend: postgres) }

    /// The PostgreSQL connection, nil on SQLite (connection-loss checks).
    var postgres: PostgresConnection? { backend as? PostgresConnection }
}
#endif
