import CSQLite
import Dispatch
import Logging
import TSSync

/// WAL checkpoints off the writer's path (https://sqlite.org/wal.html#checkpointing).
///
/// SQLite's automatic checkpoint runs inside the COMMIT that crosses `wal_autocheckpoint`: the
/// batch of writes whose commit crossed it waits while thousands of frames are copied into the
/// database file and that file is fsynced, and that wait was the toggle's p99. Here the writer's
/// automatic checkpoint is off and:
///
/// 1. **A checkpointer thread** with a connection of its own runs `PASSIVE` checkpoints (they
///    neither wait for nor block the writer or the readers) whenever `passivePages` frames were
///    appended since its last pass (an eighth of that within one window of the hard bound, so
///    the writer's restart below finds a short tail). The writer learns the WAL's length for free
///    after every commit (`sqlite3_wal_hook`, https://sqlite.org/c3ref/wal_hook.html), stores it
///    in an atomic and wakes the thread only when a pass is due.
/// 2. **A hard bound, enforced by the writer**: a PASSIVE checkpoint copies frames but never makes
///    SQLite start the WAL over. It starts over only when a write transaction begins on a WAL that
///    is fully copied and that no reader still uses; under a continuous write load the writer
///    begins the next batch right after the last commit, so that moment never comes and the file
///    would grow without end. When a commit leaves the WAL at `maxFrames` or more, the writer
///    itself runs a `RESTART` checkpoint between two batches (after the batch's callers were
///    answered): it copies the short tail the checkpointer has not copied yet, waits (busy
///    timeout) for readers still on old frames, and the next commit writes from the start of the
///    file, which `journal_size_limit` then cuts back. A pass under way is not waited for: the
///    thread starts no new one and the writer goes on committing, up to `overflowFrames` (an
///    eighth of the bound) past it. The writes queued during the restart wait: that is the
///    back-pressure that keeps the WAL bounded whatever the load, instead of unbounded growth.
///
/// Durability is unchanged: a commit is durable when its WAL frames are synced (`synchronous`);
/// both connections that checkpoint carry the same `synchronous` and platform pragmas
/// (`SQLiteConnection.durabilityPragmas`), so a checkpoint syncs the database file before the WAL
/// can be started over.
///
/// `@unchecked Sendable` invariants: `connection` is used only by the checkpointer thread, inside
/// `passLock`; `wakeRequested` and `closing` are read and written under `wake`; the counters are
/// atomics; everything else is immutable after `init`.
final class WALCheckpointer: @unchecked Sendable {
    /// Frames appended since the last pass that make a pass due; 0 = no checkpointer thread.
    let passivePages: Int
    /// WAL length in frames at which the writer restarts the WAL itself (the hard bound).
    let maxFrames: Int
    private let connection: SQLiteConnection?
    private let logger: Logger
    /// Held during every checkpoint of this database (a pass, the writer's restart,
    /// `Database.checkpoint`): two checkpoints never race for SQLite's checkpoint lock.
    let passLock = Mutex()
    private let wake = Condition()
    private var wakeRequested = false
    private var closing = false
    private var thread: SpawnedThread?

    /// Frames in the WAL after the last commit (the hook's count).
    let walFrames = Atomic<Int>(0)
    /// Frames already copied into the database file by the last checkpoint of the current WAL.
    let copiedFrames = Atomic<Int>(0)
    /// True from the hook's wake-up until the thread has taken it.
    private let passPending = Atomic<Bool>(false)
    /// Set by the writer while a restart is due: the thread starts no new pass meanwhile, so the
    /// writer gets the checkpoint as soon as the pass under way ends, with a short tail to copy.
    private let restartWanted = Atomic<Bool>(false)
    /// How far past `maxFrames` the WAL may run while a pass under way finishes (the writer keeps
    /// committing meanwhile); past it the writer waits for that pass.
    let overflowFrames: Int
    /// Background passes run, restarts the writer ran, and restarts readers kept from finishing.
    let passes = Atomic<UInt64>(0)
    let restarts = Atomic<UInt64>(0)
    let restartsBusy = Atomic<UInt64>(0)
    /// Time the writer spent in restarts (copying the tail, syncing, waiting for readers).
    let restartNanoseconds = Atomic<UInt64>(0)

    /// `connection`: a writable connection to the same file, for the thread's passes (nil when
    /// `passivePages` is 0). `maxBytes`: the hard bound of the WAL file, turned into frames of
    /// `pageSize` bytes (each frame is a 24-byte header and one page).
    init(connection: SQLiteConnection?, passivePages: Int, maxBytes: Int, pageSize: Int, logger: Logger) throws {
        self.connection = connection
        self.passivePages = connection == nil ? 0 : max(0, passivePages)
        self.maxFrames = max(1, maxBytes / max(512, pageSize + 24))
        self.overflowFrames = max(1, maxFrames / 8)
        self.logger = logger
        if self.passivePages > 0 {
            thread = try SpawnedThread.spawn(name: "ts-sqlite-ckpt", stackSize: 512 << 10) { [self] in self.runLoop() }
        }
    }

    // MARK: - The writer's side

    /// Installs the commit hook on the writer connection `writer` (after its `wal_autocheckpoint`
    /// was set to 0: that pragma installs SQLite's own hook, which this one replaces). The
    /// checkpointer must outlive the hook: `uninstall` before it goes.
    func install(on writer: SQLiteConnection) {
        sqlite3_wal_hook(writer.handle, { context, _, _, frames in
            guard let context else { return SQLITE_OK }
            Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue().committed(frames: Int(frames))
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    func uninstall(from writer: SQLiteConnection) {
        sqlite3_wal_hook(writer.handle, nil, nil)
    }

    /// On the writer thread after each commit: one atomic store, and a wake-up only when a pass is due.
    private func committed(frames: Int) {
        walFrames.store(frames, ordering: .relaxed)
        guard passivePages > 0 else { return }
        let copied = copiedFrames.load(ordering: .relaxed)
        // A WAL shorter than what was copied has started over: all of it is new.
        let fresh = frames >= copied ? frames - copied : frames
        // Within one window of the bound, passes come eight times as often: the tail the writer's
        // restart has to copy itself is then short.
        let due = frames + passivePages >= maxFrames ? max(1, passivePages / 8) : passivePages
        guard fresh >= due, !passPending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wake.lock()
        wakeRequested = true
        wake.signal()
        wake.unlock()
    }

    /// True when the last commit left the WAL at the hard bound or past it.
    var needsRestart: Bool { walFrames.load(ordering: .relaxed) >= maxFrames }

    /// On the writer thread, between batches, holding the writer connection, once `needsRestart`:
    /// a `RESTART` checkpoint, after which the next commit writes the WAL from its start. A pass
    /// under way is not waited for while the WAL is less than `overflowFrames` past the bound: the
    /// thread starts no new pass, and the next batch's check finds the lock free and only a short
    /// tail to copy. Waiting for readers is bounded by the writer's busy timeout; if they still
    /// hold old frames, the WAL stays as it is and the next batch tries again (logged).
    func restartIfDue(writer: SQLiteConnection) {
        let frames = walFrames.load(ordering: .relaxed)
        guard frames >= maxFrames else { return }
        restartWanted.store(true, ordering: .relaxed)
        if frames >= maxFrames + overflowFrames {
            passLock.withLock { restart(writer) }
        } else {
            _ = passLock.withLockIfAvailable { _ in restart(writer) }
        }
    }

    /// The restart itself, holding `passLock`.
    private func restart(_ writer: SQLiteConnection) {
        let started = DispatchTime.now().uptimeNanoseconds
        defer {
            restartWanted.store(false, ordering: .relaxed)
            restartNanoseconds.add(DispatchTime.now().uptimeNanoseconds &- started, ordering: .relaxed)
        }
        var log: Int32 = 0
        var copied: Int32 = 0
        let rc = sqlite3_wal_checkpoint_v2(writer.handle, nil, SQLITE_CHECKPOINT_RESTART, &log, &copied)
        if rc == SQLITE_OK {
            restarts.add(1, ordering: .relaxed)
            copiedFrames.store(0, ordering: .relaxed)
            walFrames.store(0, ordering: .relaxed)
        } else {
            restartsBusy.add(1, ordering: .relaxed)
            copiedFrames.store(Int(max(0, copied)), ordering: .relaxed)
            let reason = String(cString: sqlite3_errstr(rc))
            logger.warning("sqlite: the WAL reached its bound (database.walMaxBytes, \(log) frames) and could not start over: \(reason); \(copied) frames copied, the next write batch tries again")
        }
    }

    /// After a checkpoint run elsewhere (`Database.checkpoint`) reset or copied the WAL.
    func noteCheckpoint(walFrames frames: Int64, copied: Int64) {
        if frames <= 0 {
            walFrames.store(0, ordering: .relaxed)
            copiedFrames.store(0, ordering: .relaxed)
        } else {
            copiedFrames.store(Int(max(0, copied)), ordering: .relaxed)
        }
    }

    // MARK: - The checkpointer thread

    private func runLoop() {
        while true {
            wake.lock()
            while !wakeRequested && !closing { wake.wait() }
            if closing {
                wake.unlock()
                return
            }
            wakeRequested = false
            wake.unlock()
            passPending.store(false, ordering: .releasing)
            // The writer is about to restart the WAL (and copy what is left itself).
            if restartWanted.load(ordering: .relaxed) { continue }
            pass()
        }
    }

    /// One PASSIVE checkpoint on the thread's own connection: copies every frame no reader still
    /// needs, waits for nobody.
    private func pass() {
        guard let connection else { return }
        passLock.withLock {
            var log: Int32 = 0
            var copied: Int32 = 0
            let rc = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &copied)
            passes.add(1, ordering: .relaxed)
            if rc == SQLITE_OK {
                copiedFrames.store(Int(max(0, copied)), ordering: .relaxed)
            } else if rc != SQLITE_BUSY {
                logger.warning("sqlite: background WAL checkpoint failed: \(String(cString: sqlite3_errstr(rc))) (the next commit past database.walAutocheckpointPages retries)")
            }
        }
    }

    // MARK: - Shutdown

    /// Stops the thread (after a pass under way) and closes its connection. Idempotent.
    func close() {
        wake.lock()
        closing = true
        wake.signal()
        wake.unlock()
        thread?.join()
        passLock.withLock { connection?.close() }
    }
}
