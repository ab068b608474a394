import CCrypto

/// HMAC (RFC 2104) via the CCrypto shim (libcrypto's `HMAC()` on Linux, `CCHmac` on Darwin).
public enum HMAC {
    /// HMAC-SHA256 of `message` under `key` (32 bytes). Test vectors: RFC 4231 §4.
    public static func sha256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        // A zero-length buffer may have a nil base address; the libraries want a pointer for the key.
        let keyBytes = key.isEmpty ? [0] : key
        let ok = keyBytes.withUnsafeBytes { k in
            message.withUnsafeBytes { m in
                out.withUnsafeMutableBufferPointer { o in
                    ts_hmac_sha256(k.baseAddress, key.count, m.baseAddress, m.count, o.baseAddress)
                }
            }
        }
        precondition(ok == 1, "HMAC-SHA256 failed")
        return out
    }

    public static func sha256(key: [UInt8], message: String) -> [UInt8] {
        sha256(key: key, message: Array(message.utf8))
    }
}
