import Foundation
import Synchronization
import TSSync

/// Runs a command as `touchsync exec` does: found on PATH (`posix_spawnp`, POSIX.1-2017), stdio
/// inherited, SIGINT and SIGTERM restored to their default action in the child and forwarded to
/// it. Returns the shell's convention for the status: the exit code, 128 + N when killed by signal
/// N, 127 when the command is not found and 126 when it cannot be run.
///
/// The signals are watched (`SignalWatch`, registered when `install` returns) before the command
/// is spawned: a SIGTERM sent as soon as the command runs reaches it. Setting `SIG_IGN` and
/// creating the dispatch sources afterwards, as this once did, discarded a signal that came before
/// libdispatch had registered its handler on Linux (a supervisor's stop right after start left the
/// command and the server running). One that arrives before the spawn returns is kept and sent
/// once the child exists.
enum ChildProcess {
    static func run(_ argv: [String], environment: [String: String]) async -> Int32 {
        let forwarded: [Int32] = [SIGINT, SIGTERM]
        let state = ForwardingState()
        // An early signal is parked in `early`; whoever sees the pid and the parked signal first
        // (this handler once the pid is set, or the spawning task right after setting it) sends it,
        // exactly once, through the exchange.
        let watch = await SignalWatch.install(forwarded) { sig in
            let pid = state.target.load(ordering: .acquiring)
            if pid > 0 { kill(pid, sig) } else if pid == 0 { state.early.store(sig, ordering: .releasing); state.sendEarly() }
        }
        defer { watch.cancel() }

        var attr = platformSpawnAttributes()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for sig in forwarded { sigaddset(&defaults, sig) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setsigmask(&attr, &mask)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        let cEnv: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in cArgs + cEnv { free(p) } }

        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, argv[0], nil, &attr, cArgs, cEnv)
        guard rc == 0 else {
            state.target.store(-1, ordering: .releasing)
            let reason = String(cString: strerror(rc))
            FileHandle.standardError.write(Data("touchsync exec: \(argv[0]): \(rc == ENOENT ? "command not found" : reason)\n".utf8))
            return rc == ENOENT ? 127 : 126
        }

        let child = pid
        state.target.store(child, ordering: .releasing)
        state.sendEarly()

        // waitpid blocks: on its own thread, resumed through a continuation.
        return await withCheckedContinuation { (cont: CheckedContinuation<Int32, Never>) in
            let wait: @Sendable () -> Void = {
                var status: Int32 = 0
                while waitpid(child, &status, 0) < 0 && errno == EINTR {}
                state.target.store(-1, ordering: .releasing)  // its pid may be reused from now on
                cont.resume(returning: Self.shellStatus(status))
            }
            // Without a thread (the system refused one), wait here: the command must not be orphaned.
            do { try SpawnedThread.detach(name: "ts-waitpid", wait) } catch { wait() }
        }
    }

    /// The child's pid for the signal handler (0: not spawned yet; -1: the spawn failed or the
    /// child was reaped, nothing to signal) and a signal that came before it was known.
    final class ForwardingState: Sendable {
        let target = Atomic<Int32>(0)
        let early = Atomic<Int32>(0)

        func sendEarly() {
            let pid = target.load(ordering: .acquiring)
            guard pid > 0 else { return }
            let sig = early.exchange(0, ordering: .acquiringAndReleasing)
            if sig != 0 { kill(pid, sig) }
        }
    }

    /// `WIFEXITED`/`WEXITSTATUS`/`WTERMSIG` (POSIX `<sys/wait.h>`; macros, so written out).
    static func shellStatus(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
