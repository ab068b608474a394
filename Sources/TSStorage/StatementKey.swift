/// The statement cache's key: the SQL text, hashed by its length and its first and last 48 bytes
/// instead of all of it. Equality is still the whole text, so two statements that share those
/// bytes only share a hash bucket. A hot query's text is long (interaction-state's is about
/// 1 KB, one `VALUES` row per id) and the same `static let` every time: hashing all of it on
/// every lookup was about 6,000 instructions, and the equality check of identical storage is
/// one comparison.
struct StatementKey: Hashable {
    let sql: String

    init(_ sql: String) { self.sql = sql }

    static let sampledBytes = 48

    func hash(into hasher: inout Hasher) {
        var text = sql
        text.withUTF8 { b in
            hasher.combine(b.count)
            let n = Self.sampledBytes
            if b.count <= 2 * n {
                hasher.combine(bytes: UnsafeRawBufferPointer(b))
            } else {
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(b)[..<n]))
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(b)[(b.count - n)...]))
            }
        }
    }

    static func == (a: StatementKey, b: StatementKey) -> Bool { a.sql == b.sql }
}
