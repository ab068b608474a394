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

    /// A lock file that cannot be opened or locked (a path under /proc, a read-only folder).
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Another server is serving the same SQLite file (`serving(databasePath:)`).
    public struct Serving: Error, CustomStringConvertible, Sendable {
        public let databasePath: String
        public let pid: Int32?
        public var description: String {
            let who = pid.map { "process \($0)" } ?? "another process"
            return "\(who) is already serving \(databasePath) (it holds \(servingLockPath(for: databasePath))). A second server on the same "
                + "SQLite file would split realtime: a socket connected to one would never see the writes made through the other. "
                + "Stop it, or give this one another --database; several nodes share one database with Redis carrying their "
                + "events (--redis-url; across machines on PostgreSQL, --database-url; docs/realtime-cluster.md)."
        }
    }

    /// The lock only a serving process holds: `<database>.serve.lock`, exclusive, with its pid.
    public static func servingLockPath(for databasePath: String) -> String { databasePath + ".serve.lock" }

    /// Takes the serving lock exclusively: one `touchsync serve` per SQLite file, since without
    /// Redis each process delivers realtime events only to its own sockets. Fails with `Serving`
    /// naming the server that holds it. Commands that only open the database (`token`, `migrate`)
    /// and servers that share events over Redis do not take it.
    public static func serving(databasePath: String) throws -> DatabaseLock {
        let path = servingLockPath(for: databasePath)
        let fd = try openLockFile(path)
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            let reason = String(cString: strerror(errno))
            let pid = readPid(fd)
            close(fd)
            if busy { throw Serving(databasePath: databasePath, pid: pid) }
            throw Failure(description: "cannot lock \(path): \(reason)")
        }
        writePid(fd)
        return DatabaseLock(fd: fd, path: path)
    }

    /// The pid of the server serving `databasePath`, if one does (its serving lock is held).
    static func servingPid(databasePath: String) -> Int32? {
        let fd = open(servingLockPath(for: databasePath), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard flock(fd, LOCK_SH | LOCK_NB) != 0 else { return nil }  // nobody holds it: no server
        return readPid(fd)
    }

    private static func openLockFile(_ path: String) throws -> Int32 {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw Failure(description: "cannot open the lock file \(path) beside the database: \(String(cString: strerror(errno))); "
                + "the database needs a folder this process can create files in")
        }
        return fd
    }

    private static func writePid(_ fd: Int32) {
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    private static func acquire(databasePath: String, operation: Int32, wanted: String) throws -> DatabaseLock {
        let path = lockPath(for: databasePath)
        let fd = try openLockFile(path)
        guard flock(fd, operation | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            let reason = String(cString: strerror(errno))
            // The pid in the shared lock file is the last opener's, which may have exited while
            // another holder stays: name the server when one serves, else a pid still alive.
            let pid = servingPid(databasePath: databasePath) ?? readPid(fd).flatMap { kill($0, 0) == 0 || errno == EPERM ? $0 : nil }
            close(fd)
            if busy { throw Held(lockPath: path, pid: pid, wanted: wanted) }
            throw Failure(description: "cannot lock \(path): \(reason)")
        }
        // The newest holder's pid (shared holders overwrite each other: a restore checks it is alive).
        writePid(fd)
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
