import TSSockets

/// Start-up's first check: is the listening address usable? Run before the
/// database is opened, migrated or seeded, so a busy port costs nothing and says what to do.
public enum PortCheck {
    /// Throws a `ConfigurationError` naming the address and the fix when `host:port` cannot be
    /// bound. Port 0 (any free port) always can. The probe socket is closed at once; the server
    /// binds its own listener afterwards (same options: SO_REUSEADDR).
    public static func ensureAvailable(host: String, port: Int) throws {
        guard port != 0 else { return }
        do {
            let probe = try Socket.makeListener(host: host, port: port, backlog: 1)
            probe.close()
        } catch let error as SocketError {
            throw ConfigurationError(message(for: error, host: host, port: port))
        }
    }

    /// What a person can act on, for a failed bind/listen of `host:port`.
    public static func message(for error: SocketError, host: String, port: Int) -> String {
        switch error.errno {
        case EADDRINUSE:
            return "port \(port) on \(host) is already in use (another touchsync, or another program, is listening there). "
                + "Stop it, or choose another port: `touchsync serve --port 0` picks a free one and prints it; "
                + "`--port 3001`, TOUCHSYNC_PORT=3001 or the setting server.port set a fixed one."
        case EACCES:
            return "port \(port) on \(host) needs administrator rights (ports below 1024 are privileged). "
                + "Choose a port of 1024 or more: `--port 3000`, or `--port 0` for any free one."
        case EADDRNOTAVAIL:
            return "\(host) is not an address of this machine, so port \(port) cannot be opened on it. "
                + "Use `--host 127.0.0.1` (this machine only) or `--host 0.0.0.0` (every interface), or the setting server.host."
        default:
            if error.syscall == "inet_pton" {
                return "server.host \"\(host)\" is not a numeric IP address (use 127.0.0.1, 0.0.0.0, ::1, :: or localhost)."
            }
            return "cannot listen on \(host):\(port): \(error). Try `--port 0` (any free port) or check server.host."
        }
    }
}
