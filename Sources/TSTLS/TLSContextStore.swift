#if canImport(CTLS)
import Logging
import TSSync
import Foundation

/// The server's current `TLSContext`, replaceable without a restart (docs/tls.md): `reload()`
/// (on SIGHUP) or `reloadIfChanged()` (a periodic check of the files) loads the pair again; new
/// connections get the new context, open ones keep the one they started with (each SSL holds a
/// reference to its SSL_CTX). A pair that fails to load — missing, unparsable, key not matching
/// the certificate — is refused with an error line and the current context stays in use.
public final class TLSContextStore: Sendable {
    public let certificateFile: String
    public let privateKeyFile: String
    private let logger: Logger
    private struct State: Sendable {
        var context: TLSContext
        /// The files' state when last tried (loaded or refused), so a broken pair is reported once.
        var lastSeen: [FileStamp]
        var generation = 1
    }
    private let state: LockedValue<State>

    /// Loads the first pair; throws (with the reason) when it cannot be used.
    public init(certificateFile: String, privateKeyFile: String, logger: Logger) throws {
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
        self.logger = logger
        let stamps = [FileStamp(certificateFile), FileStamp(privateKeyFile)]
        let context = try TLSContext(certificateFile: certificateFile, privateKeyFile: privateKeyFile)
        state = LockedValue(State(context: context, lastSeen: stamps))
    }

    /// The context new connections use.
    public var current: TLSContext { state.withLock { $0.context } }

    /// How many pairs have been loaded (1 after `init`).
    public var generation: Int { state.withLock { $0.generation } }

    /// Loads the pair again. Returns true when the new pair is in use.
    @discardableResult
    public func reload(reason: String) -> Bool {
        let stamps = [FileStamp(certificateFile), FileStamp(privateKeyFile)]
        do {
            let context = try TLSContext(certificateFile: certificateFile, privateKeyFile: privateKeyFile)
            let generation: Int = state.withLock { s in
                s.context = context
                s.lastSeen = stamps
                s.generation += 1
                return s.generation
            }
            logger.notice("TLS certificate reloaded (\(reason)): \(context.leafSummary); new connections use it, open ones keep theirs",
                          metadata: ["generation": .stringConvertible(generation), "certificate": .string(certificateFile)])
            return true
        } catch {
            state.withLock { $0.lastSeen = stamps }
            logger.error("TLS certificate reload (\(reason)) refused, the previous certificate stays in use: \(error)",
                         metadata: ["certificate": .string(certificateFile), "privateKey": .string(privateKeyFile)])
            return false
        }
    }

    /// Reloads when either file changed (modification time, size or inode) since the last try.
    /// Returns true when a new pair was loaded.
    @discardableResult
    public func reloadIfChanged() -> Bool {
        let stamps = [FileStamp(certificateFile), FileStamp(privateKeyFile)]
        let changed = state.withLock { $0.lastSeen != stamps }
        return changed ? reload(reason: "files changed") : false
    }
}

/// What identifies one version of a file without reading it.
struct FileStamp: Sendable, Equatable {
    var inode: UInt64 = 0
    var size: UInt64 = 0
    var modified: Double = 0
    var exists = false

    init(_ path: String) {
        guard let a = try? FileManager.default.attributesOfItem(atPath: path) else { return }
        exists = true
        inode = (a[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0
        size = (a[.size] as? NSNumber)?.uint64Value ?? 0
        modified = (a[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
    }
}
#endif
