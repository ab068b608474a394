import Foundation
import TSSync

/// Runs a command as `touchsync exec` does: found on PATH (`posix_spawnp`, POSIX.1-2017), stdio
/// inherited, SIGINT and SIGTERM restored to their default action in the child (the parent
/// ignores them to receive them through dispatch sources) and forwarded to it. Returns the
/// shell's convention for the status: the exit code, 128 + N when killed by signal N, 127 when the
/// command is not found and 126 when it cannot be run.
enum ChildProcess {
    static func run(_ argv: [String], environment: [String: String]) async -> Int32 {
        let forwarded: [Int32] = [SIGINT, SIGTERM]
        for sig in forwarded { signal(sig, SIG_IGN) }

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
            let reason = String(cString: strerror(rc))
            FileHandle.standardError.write(Data("touchsync exec: \(argv[0]): \(rc == ENOENT ? "command not found" : reason)\n".utf8))
            return rc == ENOENT ? 127 : 126
        }

        let child = pid
        // Forward SIGINT/SIGTERM to the child while it runs.
        let sources = forwarded.map { sig -> any DispatchSourceSignal in
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { kill(child, sig) }
            s.resume()
            return s
        }
        defer { for s in sources { s.cancel() } }

        // waitpid blocks: on its own thread, resumed through a continuation.
        return await withCheckedContinuation { (cont: CheckedContinuation<Int32, Never>) in
            let wait: @Sendable () -> Void = {
                var status: Int32 = 0
                while waitpid(child, &status, 0) < 0 && errno == EINTR {}
                cont.resume(returning: Self.shellStatus(status))
            }
            // Without a thread (the system refused one), wait here: the command must not be orphaned.
            do { try SpawnedThread.detach(name: "ts-waitpid", wait) } catch { wait() }
        }
    }

    /// `WIFEXITED`/`WEXITSTATUS`/`WTERMSIG` (POSIX `<sys/wait.h>`; macros, so written out).
    static func shellStatus(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
