import CCrypto

/// Comparisons whose running time does not depend on where the inputs differ.
public enum ConstantTime {
    /// True when `a` and `b` are byte-for-byte equal (CRYPTO_memcmp on Linux, an XOR accumulator on
    /// Darwin; see the CCrypto shim); only the
    /// lengths (which are not secret here: MACs and hashes have fixed sizes) leak.
    public static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { pa in
            b.withUnsafeBytes { pb in ts_constant_time_equal(pa.baseAddress, pb.baseAddress, a.count) == 1 }
        }
    }
}
