/// Whether this build has TLS (libssl). On Linux it always does; on macOS, whose SDK ships no
/// OpenSSL, the server builds without TLS and refuses `tls.*` settings with `unavailableMessage`.
public enum TLSSupport {
    #if canImport(CTLS)
    public static let isAvailable = true
    #else
    public static let isAvailable = false
    #endif

    /// What the server says when `tls.*` is set in a build without TLS.
    public static let unavailableMessage =
        "this build of touchsync has no TLS support (OpenSSL's libssl was not available when it was built, e.g. on macOS); "
        + "unset tls.certificateFile/tls.privateKeyFile, or terminate TLS in a reverse proxy (see README \"Deploying with HTTPS\")"
}
