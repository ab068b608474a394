import Dispatch
import Logging
import TSSockets
import Foundation

/// TLS for a server, from its settings (`tls.*`): the transform factory to give the listener,
/// and certificate rotation — SIGHUP and a periodic check of the files, both reloading off the
/// event loops. Built by `make`, which returns nil when TLS is not configured.
// @unchecked Sendable: `signalSource`, `watchTimer` and `stopped` are only read or written while
// holding `lock`; everything else is immutable (and Sendable).
public final class TLSServerSetup: @unchecked Sendable {
    public let transformFactory: ConnectionTransformFactory
    /// One line for the start-up log ("certificate CN=..., valid until ...").
    public let summary: String
    private let reloadNow: @Sendable (String) -> Bool
    private let reloadIfChangedNow: @Sendable () -> Bool
    private let logger: Logger
    private let lock = Mutex()
    private var signalSource: (any DispatchSourceSignal)?
    private var watchTimer: ScheduledTaskHandle?
    private var stopped = false
    private let reloadQueue = DispatchQueue(label: "touchsync.tls.reload")

    /// nil when neither file is set. Throws a clear error when only one is, when this build has no
    /// TLS (`TLSSupport.unavailableMessage`), or when the pair cannot be used.
    public static func make(certificateFile: String?, privateKeyFile: String?, handshakeTimeoutNanoseconds: UInt64,
                            maxConcurrentHandshakes: Int, maxHandshakesPerAddress: Int = 0, logger: Logger) throws -> TLSServerSetup? {
        let cert = certificateFile.flatMap { $0.isEmpty ? nil : $0 }
        let key = privateKeyFile.flatMap { $0.isEmpty ? nil : $0 }
        if cert == nil && key == nil { return nil }
        guard TLSSupport.isAvailable else { throw TLSError(TLSSupport.unavailableMessage) }
        guard let cert, let key else {
            throw TLSError("HTTPS needs both tls.certificateFile (--tls-cert) and tls.privateKeyFile (--tls-key); only "
                           + (cert == nil ? "the private key" : "the certificate") + " is set")
        }
        #if canImport(CTLS)
        let store: TLSContextStore
        do {
            store = try TLSContextStore(certificateFile: cert, privateKeyFile: key, logger: logger)
        } catch {
            throw TLSError("cannot serve HTTPS: \(error)")
        }
        let gate = TLSHandshakeGate(maxConcurrent: max(0, maxConcurrentHandshakes), maxPerAddress: max(0, maxHandshakesPerAddress))
        return TLSServerSetup(transformFactory: TLSConnectionTransform.factory(store: store, gate: gate, handshakeTimeout: handshakeTimeoutNanoseconds),
                              summary: "certificate \(store.current.leafSummary) from \(cert)",
                              reloadNow: { store.reload(reason: $0) }, reloadIfChangedNow: { store.reloadIfChanged() }, logger: logger)
        #else
        throw TLSError(TLSSupport.unavailableMessage)
        #endif
    }

    private init(transformFactory: @escaping ConnectionTransformFactory, summary: String,
                 reloadNow: @escaping @Sendable (String) -> Bool, reloadIfChangedNow: @escaping @Sendable () -> Bool, logger: Logger) {
        self.transformFactory = transformFactory
        self.summary = summary
        self.reloadNow = reloadNow
        self.reloadIfChangedNow = reloadIfChangedNow
        self.logger = logger
    }

    /// Loads the pair again now (what SIGHUP does). True when the new pair is in use.
    @discardableResult
    public func reload(reason: String) -> Bool { reloadNow(reason) }

    /// Reloads when the files changed since the last try. True when a new pair was loaded.
    @discardableResult
    public func reloadIfChanged() -> Bool { reloadIfChangedNow() }

    /// Starts rotation: SIGHUP reloads (when `handleSIGHUP`), and every `checkInterval`
    /// nanoseconds of `loop`'s clock (0: never) the files are checked for a change. Reloads run
    /// on a private queue, never on an event loop (loading a key is milliseconds of CPU).
    public func startRotation(handleSIGHUP: Bool, checkInterval: UInt64, loop: EventLoop) {
        lock.withLock {
            if handleSIGHUP && signalSource == nil {
                signal(SIGHUP, SIG_IGN)  // delivered to the dispatch source instead of terminating
                let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: reloadQueue)
                source.setEventHandler { [weak self] in _ = self?.reloadNow("SIGHUP") }
                source.resume()
                signalSource = source
            }
        }
        if checkInterval > 0 { scheduleCheck(after: checkInterval, loop: loop) }
    }

    private func scheduleCheck(after interval: UInt64, loop: EventLoop) {
        lock.withLock {
            guard !stopped else { return }
            watchTimer = loop.scheduleTask(in: interval) { [weak self] in
                guard let self else { return }
                self.reloadQueue.async {
                    _ = self.reloadIfChangedNow()
                    self.scheduleCheck(after: interval, loop: loop)
                }
            }
        }
    }

    /// Stops the SIGHUP handler and the file check (on shutdown).
    public func stop() {
        lock.withLock {
            stopped = true
            watchTimer?.cancel()
            watchTimer = nil
            signalSource?.cancel()
            signalSource = nil
        }
    }
}
