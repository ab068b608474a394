import CCrypto

/// SHA-1 (FIPS 180-4) via libcrypto's EVP interface. Used for the WebSocket handshake
/// (RFC 6455 §4.2.2 `Sec-WebSocket-Accept`); not for anything security-relevant.
public enum SHA1 {
    public static let digestSize = 20
    public static func hash(_ bytes: [UInt8]) -> [UInt8] { EVPDigest.run(bytes, EVP_sha1(), digestSize) }
    public static func hash(_ string: String) -> [UInt8] { hash(Array(string.utf8)) }
}

/// SHA-256 (FIPS 180-4) via libcrypto's EVP interface.
public enum SHA256 {
    public static let digestSize = 32
    public static func hash(_ bytes: [UInt8]) -> [UInt8] { EVPDigest.run(bytes, EVP_sha256(), digestSize) }
    public static func hash(_ string: String) -> [UInt8] { hash(Array(string.utf8)) }
    /// Lowercase hex of the SHA-256 digest.
    public static func hexDigest(_ bytes: [UInt8]) -> String { Hex.encode(hash(bytes)) }
}

enum EVPDigest {
    static func run(_ bytes: [UInt8], _ md: OpaquePointer?, _ size: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(ts_evp_max_md_size()))
        var outLength: UInt32 = 0
        let ok = bytes.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { output in
                EVP_Digest(input.baseAddress, input.count, output.baseAddress, &outLength, md, nil)
            }
        }
        precondition(ok == 1 && Int(outLength) == size, "EVP_Digest failed")
        return Array(out.prefix(size))
    }
}
