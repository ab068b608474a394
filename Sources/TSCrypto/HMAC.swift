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

extension HMAC {
    /// An HMAC-SHA256 key whose key schedule is done once (RFC 2104 §4): the inner and outer
    /// hash states after the padded key's block. A MAC under it hashes only the message and the
    /// inner digest, and allocates nothing; the bytes are those of `HMAC.sha256(key:message:)`.
    /// Built once per secret (the token secret's lives in `DomainConfiguration`).
    public struct SHA256Key: Sendable {
        private let state: ts_hmac_sha256_key

        public init(_ key: [UInt8]) {
            var state = ts_hmac_sha256_key()
            let keyBytes = key.isEmpty ? [0] : key
            let ok = keyBytes.withUnsafeBytes { ts_hmac_sha256_key_init(&state, $0.baseAddress, key.count) }
            precondition(ok == 1, "HMAC-SHA256 key schedule failed")
            self.state = state
        }

        /// The 32-byte MAC of `message` into `out` (which must hold 32 bytes).
        public func authenticate(_ message: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
            precondition(out.count >= 32, "an HMAC-SHA256 needs 32 bytes")
            let ok = withUnsafePointer(to: state) { k in
                ts_hmac_sha256_keyed(k, message.baseAddress ?? UnsafeRawPointer(out.baseAddress!), message.count,
                                     out.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            precondition(ok == 1, "HMAC-SHA256 failed")
        }

        /// The MAC of `message` as an array.
        public func authenticate(_ message: [UInt8]) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: 32)
            message.withUnsafeBytes { m in out.withUnsafeMutableBytes { authenticate(m, into: $0) } }
            return out
        }
    }
}
