import CCrypto
import Synchronization

/// Server-generated identifiers: lowercase UUID strings, so clients can compare ids as plain strings.
public enum UUIDGenerator {
    /// A random (version 4, RFC 9562 §5.4) UUID from the secure RNG, lowercase,
    /// e.g. `"0f8fad5b-d9cb-469f-a165-70867728950e"`.
    ///
    /// The 16 bytes come from `RandomPool` (the CSPRNG's output, fetched 4 KiB at a time, each
    /// byte handed out once) and the 36 characters are written into the string in place: one
    /// `RAND_bytes` call per UUID cost ≈ 6,600 instructions of its own (libcrypto's DRBG locking and
    /// bookkeeping), and a REST toggle makes two ids (bench/RESULTS.md "Toggle: statements, generic
    /// locks and pages per toggle").
    public static func lowercaseV4() -> String {
        var b: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &b) { pool.take(into: $0) }
        return withUnsafeMutableBytes(of: &b) { raw in
            raw[6] = (raw[6] & 0x0f) | 0x40   // version 4
            raw[8] = (raw[8] & 0x3f) | 0x80   // variant 10xx (RFC 9562 §4.1)
            return String(unsafeUninitializedCapacity: 36) { out in
                var o = 0
                for i in 0..<16 {
                    if i == 4 || i == 6 || i == 8 || i == 10 { out[o] = UInt8(ascii: "-"); o += 1 }
                    out[o] = hexDigit(raw[i] >> 4)
                    out[o + 1] = hexDigit(raw[i] & 0x0f)
                    o += 2
                }
                return o
            }
        }
    }

    @inline(__always)
    private static func hexDigit(_ v: UInt8) -> UInt8 { v < 10 ? 0x30 + v : 0x57 + v }

    private static let pool = RandomPool()
}

/// Bytes of the system CSPRNG (`ts_random_bytes`, as `SecureRandom`) fetched a block at a time
/// and handed out in order, each once, under a lock. For identifiers, which must not repeat and
/// must not be guessable from one another, but are no secret: keys, salts and tokens still come
/// straight from `SecureRandom.bytes`.
final class RandomPool: Sendable {
    private struct Block {
        var bytes = [UInt8](repeating: 0, count: RandomPool.blockSize)
        var used = RandomPool.blockSize  // empty until the first take fills it
    }

    static let blockSize = 4096
    private let block = Mutex(Block())

    /// Fills `out` (at most `blockSize` bytes) with bytes no other call gets.
    func take(into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count <= Self.blockSize, "a RandomPool take is at most one block")
        block.withLock { b in
            if b.used + out.count > Self.blockSize {
                let ok = b.bytes.withUnsafeMutableBufferPointer { ts_random_bytes($0.baseAddress, Self.blockSize) }
                precondition(ok == 1, "the system CSPRNG is unavailable")
                b.used = 0
            }
            b.bytes.withUnsafeBytes { src in
                out.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[b.used..<(b.used + out.count)]))
            }
            // The bytes handed out are overwritten, so the block never holds an id already given.
            for i in b.used..<(b.used + out.count) { b.bytes[i] = 0 }
            b.used += out.count
        }
    }
}
