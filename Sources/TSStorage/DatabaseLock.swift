import TSSync

/// The lock that tells a restore that a process has the SQLite database open: `<database>.lock`,
/// held with `flock(2)` for as long as the process uses the database, with the holder's pid written
/// in it.
///
/// Every process that opens the database (the server, `migrate`, `token`) takes it shared; a
/// restore takes it exclusive, without waiting, so it fails while any of them runs and no server
/// can start while a restore swaps the files. The kernel releases a `flock` when its holder exits,
/// however it exits, so a crashed server never leaves a stale lock behind (the pid in the file may
/// be stale; the lock is what counts). `flock` locks belong to the open file description, so two
/// holders in one process (a test's server and its restore) conflict exactly as two processes do.
public final class DatabaseLock: Sendable {
    /// The lock file's descriptor; -1 once released.
    private let fd: LockedValue<Int32>
    public let path: String

    /// Another process holds the lock: `pid` is the one written in the lock file (nil when unreadable).
    public struct Held: Error, CustomStringConvertible, Sendable {
        public let lockPath: String
        public let pid: Int32?
        public let wanted: String
        public var description: String {
            let who = pid.map { "process \($0)" } ?? "another process"
            return "\(who) has the database open (it holds \(lockPath)); \(wanted)"
        }
    }

    /// The lock file of the database at `databasePath`.
    public static func lockPath(for databasePath: String) -> String { databasePath + ".lock" }

    /// Takes the lock shared (a process that uses the database). Fails with `Held` while a restore
    /// holds it exclusively.
    public static func shared(databasePath: String) throws -> DatabaseLock {
        try acquire(databasePath: databasePath, operation: LOCK_SH,
                    wanted: "a restore is replacing the database; start again when it has finished")
    }

    /// Takes the lock exclusively (a restore). Fails with `Held`, naming the holder's pid, while any
    /// process uses the database.
    public static func exclusive(databasePath: String) throws -> DatabaseLock {
        try acquire(databasePath: databasePath, operation: LOCK_EX, wanted: "stop it before restoring")
    }

    private static func acquire(databasePath: String, operation: Int32, wanted: String) throws -> DatabaseLock {
        let path = lockPath(for: databasePath)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw StorageError(code: 0, message: "cannot open the lock file \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, operation | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            let reason = String(cString: strerror(errno))
            let pid = readPid(fd)
            close(fd)
            if busy { throw Held(lockPath: path, pid: pid, wanted: wanted) }
            throw StorageError(code: 0, message: "cannot lock \(path): \(reason)")
        }
        // The newest holder's pid (shared holders overwrite each other: any one of them is worth naming).
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return DatabaseLock(fd: fd, path: path)
    }

    private static func readPid(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        let text = String(decoding: buffer[0..<n], as: UTF8.self).split(separator: "\n").first ?? ""
        return Int32(text)
    }

    private init(fd: Int32, path: String) {
        self.fd = LockedValue(fd)
        self.path = path
    }

    /// Releases the lock (idempotent). The file stays: removing it would race with a process that
    /// has just opened it and is about to lock it.
    public func release() {
        fd.withLock { fd in
            guard fd >= 0 else { return }
            close(fd)
            fd = -1
        }
    }

    deinit { release() }
}
