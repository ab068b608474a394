/// A TLS set-up failure, with a message meant for the operator's log.
public struct TLSError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
