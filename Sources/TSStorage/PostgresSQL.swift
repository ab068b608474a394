/// Text-level helpers of the PostgreSQL backend. Pure functions (no libpq), so they are built and
/// tested on every platform.
public enum PostgresSQL {
    /// Rewrites SQLite-style parameters into PostgreSQL's `$1…$n`
    /// (https://www.postgresql.org/docs/15/sql-expressions.html#SQL-EXPRESSIONS-PARAMETERS-POSITIONAL)
    /// and returns how many arguments the statement takes. Follows SQLite's numbering
    /// (https://sqlite.org/lang_expr.html#parameters): `?NNN` is parameter NNN; a bare `?` is one
    /// more than the largest number assigned so far. A `?` inside a string literal ('…', with ''
    /// as an escaped quote), a quoted identifier ("…"), a `--` line comment or a `/* */` block
    /// comment is left alone. One pass over the UTF-8 bytes; the connection caches the result per SQL text.
    public static func translate(_ sql: String) -> (sql: String, parameterCount: Int) {
        enum State { case normal, single, double, line, block }
        var state = State.normal
        let bytes = Array(sql.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 8)
        var largest = 0
        var previous: UInt8 = 0
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            switch state {
            case .normal:
                switch byte {
                case UInt8(ascii: "?"):
                    var j = i + 1
                    var number = 0
                    while j < bytes.count, bytes[j] >= 48, bytes[j] <= 57, number < 100_000 {
                        number = number * 10 + Int(bytes[j] - 48)
                        j += 1
                    }
                    if j == i + 1 { number = largest + 1 }
                    largest = max(largest, number)
                    out.append(UInt8(ascii: "$"))
                    out.append(contentsOf: String(number).utf8)
                    previous = 0
                    i = j
                    continue
                case UInt8(ascii: "'"): state = .single
                case UInt8(ascii: "\""): state = .double
                case UInt8(ascii: "-") where previous == UInt8(ascii: "-"): state = .line
                case UInt8(ascii: "*") where previous == UInt8(ascii: "/"): state = .block
                default: break
                }
            case .single: if byte == UInt8(ascii: "'") { state = .normal }  // '' re-enters at once
            case .double: if byte == UInt8(ascii: "\"") { state = .normal }
            case .line: if byte == UInt8(ascii: "\n") { state = .normal }
            case .block:
                if byte == UInt8(ascii: "/") && previous == UInt8(ascii: "*") {
                    state = .normal
                    out.append(byte)
                    previous = 0
                    i += 1
                    continue
                }
            }
            out.append(byte)
            previous = byte
            i += 1
        }
        return (String(decoding: out, as: UTF8.self), largest)
    }
}

/// `postgres://user:pass@host:port/db` URLs (https://www.postgresql.org/docs/15/libpq-connect.html#LIBPQ-CONNSTRING).
public enum PostgresURL {
    /// True for a `postgres://` or `postgresql://` URL (the value of `database.url`).
    public static func isPostgres(_ url: String) -> Bool {
        let lower = url.lowercased()
        return lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://")
    }

    /// The URL with its password replaced by `***`, for messages and logs.
    public static func redact(_ url: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        guard let at = rest.lastIndex(of: "@") else { return url }
        let userInfo = rest[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return url }
        return String(url[..<scheme.upperBound]) + userInfo[..<colon] + ":***" + rest[at...]
    }

    /// The same server URL naming database `name` instead (keeps user, password, host, port, query).
    public static func replacingDatabase(in url: String, with name: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        let query = rest.firstIndex(of: "?")
        let authority = rest[..<(query ?? rest.endIndex)]
        let hostPart = authority.firstIndex(of: "/").map { authority[..<$0] } ?? authority
        return String(url[..<scheme.upperBound]) + hostPart + "/" + name + (query.map { String(rest[$0...]) } ?? "")
    }
}

/// One-off administrative statements on a PostgreSQL server (`CREATE DATABASE`, `DROP DATABASE`,
/// which cannot run inside a transaction): opens a connection, runs `sql`, closes. Blocking: for
/// the CLI and tests only.
public enum PostgresAdmin {
    public static func execute(url: String, _ sql: String, connectTimeout: Duration = .seconds(5)) throws {
        #if canImport(CPostgres)
        var configuration = DatabaseConfiguration()
        configuration.postgresConnectTimeout = connectTimeout
        let connection = try PostgresConnection(url: url, readOnly: false, configuration: configuration)
        defer { connection.close() }
        try connection.executeScript(sql)
        #else
        throw StorageError.misuse("this build has no PostgreSQL support (libpq is linked on Linux only)")
        #endif
    }

    /// True when this build links libpq (Linux).
    public static var isSupported: Bool {
        #if canImport(CPostgres)
        return true
        #else
        return false
        #endif
    }
}
