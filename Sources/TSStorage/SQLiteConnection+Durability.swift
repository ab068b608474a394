import TSSync

extension SQLiteConnection {
    /// The pragmas a writable connection needs on `system` so that a commit SQLite reports as
    /// durable (`PRAGMA synchronous = FULL`) survives power loss, not only a crash.
    ///
    /// SQLite syncs with fsync(2). On Linux that flushes the file to the drive. On macOS fsync only
    /// hands the data to the drive, whose cache may still lose it; the flush to stable storage is
    /// `fcntl(F_FULLFSYNC)` (fsync(2) and fcntl(2) man pages on macOS), which SQLite uses only when
    /// asked: `fullfsync` for the syncs of a commit, `checkpoint_fullfsync` for those of a WAL
    /// checkpoint (https://sqlite.org/pragma.html#pragma_fullfsync). Elsewhere both are no-ops, so
    /// nothing is added.
    static func durabilityPragmas(for system: OperatingSystem) -> [String] {
        switch system {
        case .darwin: return ["PRAGMA fullfsync = ON", "PRAGMA checkpoint_fullfsync = ON"]
        case .linux: return []
        }
    }
}
