
/// A failed system call: the syscall's name and the `errno` captured immediately after it failed.
public struct SocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Name of the failing system call, e.g. `"bind"`.
    public let syscall: String
    /// The `errno` value captured right after the call returned.
    public let errno: Int32
    /// `strerror(errno)` at capture time.
    public let message: String

    public init(syscall: String, errno: Int32) {
        self.syscall = syscall
        self.errno = errno
        if let text = strerror(errno) {
            self.message = String(cString: text)
        } else {
            self.message = "errno \(errno)"
        }
    }

    /// Captures the current thread's `errno` for `syscall`.
    @inline(__always)
    static func current(_ syscall: String) -> SocketError {
        SocketError(syscall: syscall, errno: Platform.errno)
    }

    public var description: String { "\(syscall): \(message) (errno \(errno))" }
}
