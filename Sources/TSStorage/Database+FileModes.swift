import Foundation
import Logging

/// The SQLite files hold every user's password hash and token version, like the backups (0600):
/// they are created readable by their owner only, and an existing file readable by others is
/// reported at start-up with the command that fixes it.
extension Database {
    /// Creates the database file at `path` with mode 0600 when it does not exist yet, so SQLite
    /// opens that empty file (a valid empty database) instead of creating one with its default
    /// 0644. SQLite gives the `-wal` and `-shm` files it creates the database file's mode
    /// (its unix VFS, `findCreateFileMode`), so they are 0600 too. URIs and in-memory paths are
    /// left to SQLite.
    static func createPrivateFileIfMissing(_ path: String) {
        guard !isMemoryPath(path), !path.hasPrefix("file:"), !FileManager.default.fileExists(atPath: path) else { return }
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }  // SQLite's own open reports why (a missing directory, rights)
        _ = fchmod(fd, 0o600)  // whatever the umask
        closeDescriptor(fd)
    }

    /// The database file and its `-wal` and `-shm` that exist with a mode wider than 0600
    /// (group or others may read or write), with that mode.
    public static func filesReadableByOthers(_ path: String) -> [(path: String, mode: mode_t)] {
        guard !isMemoryPath(path), !path.hasPrefix("file:") else { return [] }
        return [path, path + "-wal", path + "-shm"].compactMap { file in
            var st = stat()
            guard stat(file, &st) == 0 else { return nil }
            let mode = mode_t(st.st_mode) & 0o777
            return mode & 0o077 != 0 ? (file, mode) : nil
        }
    }

    /// One line naming each file with its mode and the `chmod` to run; nil when none is wider.
    public static func widerModeWarning(_ path: String) -> String? {
        let wide = filesReadableByOthers(path)
        guard !wide.isEmpty else { return nil }
        let named = wide.map { "\($0.path) (\(String($0.mode, radix: 8).leftPadded(to: 4)))" }.joined(separator: ", ")
        return "sqlite: \(named) can be read by other users of this machine, and the database holds password hashes: "
            + "run chmod 600 \(wide.map { shellQuoted($0.path) }.joined(separator: " "))"
    }

    private static func shellQuoted(_ s: String) -> String {
        s.allSatisfy { $0.isLetter || $0.isNumber || "/._-+:@".contains($0) } ? s : "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// `close(2)` (inside `Database` the name is its own `close()`).
private func closeDescriptor(_ fd: Int32) { _ = close(fd) }

private extension String {
    func leftPadded(to n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }
}
