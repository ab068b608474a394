/// One schema migration file, `NNNN_name.sql` (e.g. `0003_add_reactions.sql`).
public struct Migration: Sendable, Hashable {
    /// The numeric prefix; migrations apply in ascending order of it.
    public var version: Int
    /// The part after the prefix, without `.sql` (e.g. `add_reactions`).
    public var name: String
    /// The file name (e.g. `0003_add_reactions.sql`), used in messages.
    public var fileName: String
    public var path: String
    /// Lowercase hex SHA-256 of the file's bytes, recorded in `schema_migrations.checksum`.
    public var checksum: String
    /// Checksums of earlier texts of this file that differ from it in comments only: a database
    /// that recorded one of them applied the same statements, so it is not a changed migration.
    public var earlierChecksums: Set<String> = []
    public var sql: String

    public init(version: Int, name: String, fileName: String, path: String, checksum: String, sql: String) {
        self.version = version
        self.name = name
        self.fileName = fileName
        self.path = path
        self.checksum = checksum
        self.sql = sql
    }

    /// Whether `recorded` (from `schema_migrations`) is this migration, as it is or in an earlier
    /// comment-only revision.
    public func matches(recordedChecksum recorded: String) -> Bool {
        recorded == checksum || earlierChecksums.contains(recorded)
    }

    /// Parses `NNNN_name.sql` into (version, name); nil when the name does not match.
    static func parseFileName(_ fileName: String) -> (version: Int, name: String)? {
        guard fileName.hasSuffix(".sql") else { return nil }
        let stem = fileName.dropLast(4)
        guard let underscore = stem.firstIndex(of: "_") else { return nil }
        let digits = stem[..<underscore]
        let name = stem[stem.index(after: underscore)...]
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), !name.isEmpty,
              let version = Int(digits) else { return nil }
        return (version, String(name))
    }
}
