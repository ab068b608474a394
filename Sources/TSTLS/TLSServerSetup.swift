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
    /// What it was made from (the rotation's check interval, the redirect port).
    public let configuration: Configuration
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

    /// What HTTPS on a listener needs (`tls.*`), with the settings' defaults.
    public struct Configuration: Sendable {
        /// PEM certificate chain, leaf first; with `privateKeyFile` it turns HTTPS on.
        public var certificateFile: String?
        /// Unencrypted PEM private key of `certificateFile`.
        public var privateKeyFile: String?
        /// Total time from accept to a finished handshake (at least a second is used).
        public var handshakeTimeout: Duration = .seconds(10)
        /// Handshakes past their first ClientHello byte at once across the server (0: no bound).
        public var maxConcurrentHandshakes: Int = 1024
        /// Handshakes in progress from one client address, silent ones included (0: no bound).
        public var maxHandshakesPerAddress: Int = 32
        /// How often the files are checked for a change (`startRotation`); 0 turns the check off.
        public var reloadCheckInterval: Duration = .seconds(60)
        /// A second, plain-HTTP port answering 308 to the HTTPS URL (served by the application); 0 = none.
        public var redirectPort: Int = 0

        public init(certificateFile: String?, privateKeyFile: String?) {
            self.certificateFile = certificateFile
            self.privateKeyFile = privateKeyFile
        }
    }

    /// nil when neither file is set. Throws a clear error when only one is, when this build has no
    /// TLS (`TLSSupport.unavailableMessage`), or when the pair cannot be used.
    public static func make(configuration: Configuration, logger: Logger) throws -> TLSServerSetup? {
        let cert = configuration.certificateFile.flatMap { $0.isEmpty ? nil : $0 }
        let key = configuration.privateKeyFile.flatMap { $0.isEmpty ? nil : $0 }
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
        let gate = TLSHandshakeGate(maxConcurrent: max(0, configuration.maxConcurrentHandshakes),
                                    maxPerAddress: max(0, configuration.maxHandshakesPerAddress))
        let handshakeTimeout = max(.seconds(1), configuration.handshakeTimeout).clockNanoseconds
        return TLSServerSetup(transformFactory: TLSConnectionTransform.factory(
            store: store, gate: gate, handshakeTimeout: handshakeTimeout, refusals: TLSConnectionTransform.makeRefusalLog(logger: logger)),
                              configuration: configuration, summary: "certificate \(store.current.leafSummary) from \(cert)",
                              reloadNow: { store.reload(reason: $0) }, reloadIfChangedNow: { store.reloadIfChanged() }, logger: logger)
        #else
        throw TLSError(TLSSupport.unavailableMessage)
        #endif
    }

    private init(transformFactory: @escaping ConnectionTransformFactory, configuration: Configuration, summary: String,
                 reloadNow: @escaping @Sendable (String) -> Bool, reloadIfChangedNow: @escaping @Sendable () -> Bool, logger: Logger) {
        self.transformFactory = transformFactory
        self.configuration = configuration
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

    /// Starts rotation: SIGHUP reloads (when `handleSIGHUP`), and every `checkInterval` of
    /// `loop`'s clock (0: never) the files are checked for a change. Reloads run on a private
    /// queue, never on an event loop (loading a key is milliseconds of CPU).
    public func startRotation(handleSIGHUP: Bool, checkInterval: Duration, loop: EventLoop) {
        lock.withLock {
            if handleSIGHUP && signalSource == nil {
                signal(SIGHUP, SIG_IGN)  // delivered to the dispatch source instead of terminating
                let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: reloadQueue)
                source.setEventHandler { [weak self] in _ = self?.reloadNow("SIGHUP") }
                source.resume()
                signalSource = source
            }
        }
        if checkInterval > .zero { scheduleCheck(after: checkInterval.clockNanoseconds, loop: loop) }
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
