import CCrypto

/// HMAC (RFC 2104) via libcrypto's one-shot `HMAC()`.
public enum HMAC {
    /// HMAC-SHA256 of `message` under `key` (32 bytes). Test vectors: RFC 4231 §4.
    public static func sha256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(ts_evp_max_md_size()))
        var outLength: UInt32 = 0
        // A zero-length buffer may have a nil base address; OpenSSL wants a pointer for the key.
        let keyBytes = key.isEmpty ? [0] : key
        let result = keyBytes.withUnsafeBufferPointer { k in
            message.withUnsafeBufferPointer { m in
                out.withUnsafeMutableBufferPointer { o in
                    CCrypto.HMAC(EVP_sha256(), k.baseAddress, Int32(key.count),
                                 m.baseAddress, m.count, o.baseAddress, &outLength)
                }
            }
        }
        precondition(result != nil && outLength == 32, "HMAC-SHA256 failed")
        return Array(out.prefix(32))
    }

    public static func sha256(key: [UInt8], message: String) -> [UInt8] {
        sha256(key: key, message: Array(message.utf8))
    }
}
