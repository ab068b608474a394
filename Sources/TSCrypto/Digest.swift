import CCrypto

/// SHA-1 (FIPS 180-4) via the CCrypto shim (libcrypto on Linux, CommonCrypto on Darwin). Used for the WebSocket handshake
/// (RFC 6455 §4.2.2 `Sec-WebSocket-Accept`); not for anything security-relevant.
public enum SHA1 {
    public static let digestSize = 20
    public static func hash(_ bytes: [UInt8]) -> [UInt8] { ShimDigest.run(bytes, digestSize, ts_sha1) }
    public static func hash(_ string: String) -> [UInt8] { hash(Array(string.utf8)) }
}

/// SHA-256 (FIPS 180-4) via the CCrypto shim.
public enum SHA256 {
    public static let digestSize = 32
    public static func hash(_ bytes: [UInt8]) -> [UInt8] { ShimDigest.run(bytes, digestSize, ts_sha256) }
    public static func hash(_ string: String) -> [UInt8] { hash(Array(string.utf8)) }
    /// Lowercase hex of the SHA-256 digest.
    public static func hexDigest(_ bytes: [UInt8]) -> String { Hex.encode(hash(bytes)) }
}

enum ShimDigest {
    static func run(_ bytes: [UInt8], _ size: Int,
                    _ digest: (UnsafeRawPointer?, Int, UnsafeMutablePointer<UInt8>?) -> Int32) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size)
        let ok = bytes.withUnsafeBytes { input in
            out.withUnsafeMutableBufferPointer { output in digest(input.baseAddress, input.count, output.baseAddress) }
        }
        precondition(ok == 1, "digest failed")
        return out
    }
}
